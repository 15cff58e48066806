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

/// UTF-8 bytes of one event's output, built with plain byte writes into a raw staging buffer
/// (an array append checks uniqueness and capacity per call, which costs far more than the
/// bytes) and handed to the output in one copy per event.
struct ByteSink {
    /// The staging buffer: a class, so copies of the sink share it and it is freed once.
    private final class Storage {
        @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
        @exclusivity(unchecked) var count = 0
        @exclusivity(unchecked) var capacity: Int

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        @inline(__always) func reserve(_ extra: Int) {
            if count + extra > capacity { grow(extra) }
        }

        @inline(never) func grow(_ extra: Int) {
            var grown = capacity * 2
            while grown < count + extra { grown *= 2 }
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: base, count: count)
            base.deallocate()
            base = moved
            capacity = grown
        }
    }

    private let storage: Storage

    init(capacity: Int = 4096) { storage = Storage(capacity: capacity) }

    /// The bytes written so far.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage.base, count: storage.count) }

    mutating func append(_ s: String) {
        // Native strings lend their bytes as they are; others are made contiguous first.
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ append(bytes: $0) }) { return done }
        var s = s
        s.withUTF8 { append(bytes: $0) }
    }

    /// A literal: its bytes are in the binary, so no String is made or inspected.
    mutating func literal(_ s: StaticString) {
        s.withUTF8Buffer { append(bytes: $0) }
    }

    mutating func append(bytes p: UnsafeBufferPointer<UInt8>) {
        guard let from = p.baseAddress, !p.isEmpty else { return }
        storage.reserve(p.count)
        (storage.base + storage.count).update(from: from, count: p.count)
        storage.count += p.count
    }

    mutating func append(byte b: UInt8) {
        storage.reserve(1)
        storage.base[storage.count] = b
        storage.count += 1
    }

    /// Decimal digits, written in place.
    mutating func append(_ n: Int) {
        storage.reserve(20)
        if n < 0 {
            storage.base[storage.count] = UInt8(ascii: "-")
            storage.count += 1
        }
        var v = n.magnitude
        let start = storage.count
        repeat {
            storage.base[storage.count] = UInt8(ascii: "0") + UInt8(v % 10)
            storage.count += 1
            v /= 10
        } while v > 0
        var digits = UnsafeMutableBufferPointer(start: storage.base + start, count: storage.count - start)
        digits.reverse()
    }

    /// `.` and the fraction of the second with the timestamp's digits (nothing for 0 digits).
    mutating func appendFraction(_ t: Timestamp) {
        let digits = t.fractionalDigits
        guard digits > 0 else { return }
        var v = t.nanoseconds
        for _ in digits..<9 { v /= 10 }
        storage.reserve(digits + 1)
        storage.base[storage.count] = UInt8(ascii: ".")
        for i in stride(from: digits, through: 1, by: -1) {
            storage.base[storage.count + i] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        }
        storage.count += digits + 1
    }

    /// Lets `write` append to `bytes` through a sink: one copy of its output per call. A sink
    /// given is emptied and reused (its buffer is kept from call to call).
    static func borrowing(_ bytes: inout [UInt8], reusing sink: ByteSink? = nil, _ write: (inout ByteSink) -> Void) {
        var sink = sink ?? ByteSink()
        sink.storage.count = 0
        write(&sink)
        bytes.append(contentsOf: sink.bytes)
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
        storage.count = 0
        return s
    }
}

extension JSON {
    /// Whether no byte of `p` is a control byte, a quote or a backslash. Eight bytes at a time:
    /// `(x - 0x01…01) & ~x & 0x80…80` is non-zero exactly when a byte of `x` is zero, applied to
    /// the bytes below 0x20 (x & 0xE0…E0 is zero) and to x XOR '"' and x XOR '\\'.
    static func needsNoEscape(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        var i = 0
        while i + 8 <= p.count {
            let x = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            if hasZero(x & 0xE0E0_E0E0_E0E0_E0E0) || hasZero(x ^ 0x2222_2222_2222_2222)
                || hasZero(x ^ 0x5C5C_5C5C_5C5C_5C5C) { return false }
            i += 8
        }
        while i < p.count {
            let u = base[i]
            if u < 0x20 || u == 0x22 || u == 0x5C { return false }
            i += 1
        }
        return true
    }

    /// A JSON string literal of `s`, appended byte by byte: UTF-8 multi-byte sequences never hold
    /// a quote, a backslash or a control byte, so escaping bytes is escaping characters.
    static func escape(_ s: String, into out: inout ByteSink) {
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ escape(bytes: $0, into: &out) }) { return done }
        var s = s
        s.withUTF8 { escape(bytes: $0, into: &out) }
    }

    /// The bytes of a string, escaped between quotes.
    static func escape(bytes p: UnsafeBufferPointer<UInt8>, into out: inout ByteSink) {
        out.append(byte: 0x22)
        if JSON.needsNoEscape(p) {
            out.append(bytes: p)
        } else {
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            for u in p {
                switch u {
                case 0x22: out.append(byte: 0x5C); out.append(byte: 0x22)
                case 0x5C: out.append(byte: 0x5C); out.append(byte: 0x5C)
                case 0x0A: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "n"))
                case 0x0D: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "r"))
                case 0x09: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "t"))
                case 0..<0x20:
                    for b in [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(u >> 4)], hex[Int(u & 0xF)]] { out.append(byte: b) }
                default: out.append(byte: u)
                }
            }
        }
        out.append(byte: 0x22)
    }
}
