/// A recursive-descent reader of RFC 8259's grammar that only says whether the bytes are well formed.
struct JSONSyntax {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    /// Deeper nesting is reported: the renderers' depth follows the decoders' caps (AMQP field
    /// tables at most 128), far below this.
    static let maxDepth = 1000

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Nil when the bytes are exactly one JSON value with optional white space around it.
    mutating func lineError() -> String? {
        if let error = value(depth: 0) { return error }
        skipSpace()
        return at == bytes.count ? nil : "bytes after the value at offset \(at)"
    }

    private var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while let b = peek, b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { at += 1 }
    }

    private mutating func value(depth: Int) -> String? {
        guard depth < Self.maxDepth else { return "nested deeper than \(Self.maxDepth)" }
        skipSpace()
        guard let b = peek else { return "a value expected at the end" }
        switch b {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return "unexpected byte 0x\(String(b, radix: 16)) at offset \(at)"
        }
    }

    private mutating func object(depth: Int) -> String? {
        at += 1
        skipSpace()
        if peek == UInt8(ascii: "}") { at += 1; return nil }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { return "a key expected at offset \(at)" }
            if let error = string() { return error }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { return "':' expected at offset \(at)" }
            at += 1
            if let error = value(depth: depth + 1) { return error }
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): at += 1
            case UInt8(ascii: "}"): at += 1; return nil
            default: return "',' or '}' expected at offset \(at)"
            }
        }
    }

    private mutating func array(depth: Int) -> String? {
        at += 1
        skipSpace()
        if peek == UInt8(ascii: "]") { at += 1; return nil }
        while true {
            if let error = value(depth: depth + 1) { return error }
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): at += 1
            case UInt8(ascii: "]"): at += 1; return nil
            default: return "',' or ']' expected at offset \(at)"
            }
        }
    }

    private mutating func string() -> String? {
        at += 1
        while let b = peek {
            at += 1
            switch b {
            case UInt8(ascii: "\""): return nil
            case UInt8(ascii: "\\"):
                guard let e = peek else { return "an escape cut short" }
                at += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let h = peek, isHexDigit(h) else { return "\\u needs four hex digits at offset \(at)" }
                        at += 1
                    }
                default: return "escape \\\(Character(Unicode.Scalar(e))) at offset \(at - 1)"
                }
            case 0x00..<0x20: return "control byte 0x\(String(b, radix: 16)) unescaped in a string at offset \(at - 1)"
            default: continue
            }
        }
        return "a string not closed"
    }

    private func isHexDigit(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
    }

    private mutating func digits() -> Int {
        let from = at
        while let b = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) { at += 1 }
        return at - from
    }

    private mutating func number() -> String? {
        let from = at
        if peek == UInt8(ascii: "-") { at += 1 }
        if peek == UInt8(ascii: "0") {
            at += 1
        } else if digits() == 0 {
            return "a number without digits at offset \(from)"
        }
        if peek == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { return "a fraction without digits at offset \(from)" }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            at += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { return "an exponent without digits at offset \(from)" }
        }
        return nil
    }

    private mutating func literal(_ word: StaticString) -> String? {
        let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard at + w.count <= bytes.count, zip(w, bytes[at..<(at + w.count)]).allSatisfy({ $0 == $1 }) else {
            return "\(word) expected at offset \(at)"
        }
        at += w.count
        return nil
    }
}
