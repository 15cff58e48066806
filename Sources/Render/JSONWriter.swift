import Dissection

/// Minimal JSON text building, without Foundation.
enum JSON {
    static func escape(_ s: String, into out: inout String) {
        out.append("\"")
        var needsWork = false
        for u in s.utf8 where u < 0x20 || u == 0x22 || u == 0x5C { needsWork = true; break }
        if !needsWork {
            out.append(s)
        } else {
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out.append("\\\"")
                case "\\": out.append("\\\\")
                case "\n": out.append("\\n")
                case "\r": out.append("\\r")
                case "\t": out.append("\\t")
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        out.append("\"")
    }

    static func string(_ s: String) -> String {
        var out = ""
        escape(s, into: &out)
        return out
    }
}

/// UTF-8 bytes of one JSON line, built with plain byte appends (a String append costs far more
/// per call) and handed to the output as one String per event.
struct ByteSink {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ n: Int) {
        if n >= 0 && n < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(n))
        } else {
            append(String(n))
        }
    }

    /// `.` and the fraction of the second with the timestamp's digits (nothing for 0 digits).
    mutating func appendFraction(_ t: Timestamp) {
        let digits = t.fractionalDigits
        guard digits > 0 else { return }
        var v = t.nanoseconds
        for _ in digits..<9 { v /= 10 }
        bytes.append(UInt8(ascii: "."))
        let start = bytes.count
        for _ in 0..<digits {
            bytes.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        }
        bytes[start...].reverse()
    }

    /// Lets `write` append to `bytes` through a sink, without copying them.
    static func borrowing(_ bytes: inout [UInt8], _ write: (inout ByteSink) -> Void) {
        var sink = ByteSink()
        swap(&sink.bytes, &bytes)
        write(&sink)
        swap(&sink.bytes, &bytes)
    }

    /// The text that `write` makes, for renderers asked for a String.
    static func text(_ write: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        write(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The bytes as text, emptying the sink (its capacity is kept).
    mutating func take() -> String {
        let s = String(decoding: bytes, as: UTF8.self)
        bytes.removeAll(keepingCapacity: true)
        return s
    }
}

extension JSON {
    /// A JSON string literal of `s`, appended byte by byte: UTF-8 multi-byte sequences never hold
    /// a quote, a backslash or a control byte, so escaping bytes is escaping characters.
    static func escape(_ s: String, into out: inout ByteSink) {
        var s = s
        s.withUTF8 { p in
            out.bytes.append(0x22)
            var clean = true
            for u in p where u < 0x20 || u == 0x22 || u == 0x5C {
                clean = false
                break
            }
            if clean {
                out.bytes.append(contentsOf: p)
            } else {
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                for u in p {
                    switch u {
                    case 0x22: out.bytes.append(contentsOf: [0x5C, 0x22])
                    case 0x5C: out.bytes.append(contentsOf: [0x5C, 0x5C])
                    case 0x0A: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                    case 0x0D: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                    case 0x09: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                    case 0..<0x20:
                        out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(u >> 4)], hex[Int(u & 0xF)]])
                    default: out.bytes.append(u)
                    }
                }
            }
            out.bytes.append(0x22)
        }
    }
}
