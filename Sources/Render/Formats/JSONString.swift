import Dissection

/// JSON string literals, without Foundation: strings escaped straight into a byte sink. The JSON
/// renderer writes its keys and strings with it, and the text tree its quoted previews.
public enum JSONString {
    /// The lower-case hex digit of a value below 16.
    @usableFromInline static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10 }

    /// Whether no byte of `p` is a control byte, a quote or a backslash. No byte-by-byte loop
    /// from 4 bytes up: sixteen bytes at a time on x86-64, else eight, the last ones overlapping
    /// those before; 4 to 7 bytes (short keys) as two overlapping 4-byte words.
    @inlinable
    public static func needsNoEscape(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let n = p.count
        let raw = UnsafeRawPointer(base)
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
        // Payload previews run to hundreds of bytes: sixteen at a time (SSE2), the last sixteen
        // overlapping the ones before.
        if n >= 16 {
            var i = 0
            while i + 16 <= n {
                if !ByteWords.jsonPlain16(raw + i) { return false }
                i += 16
            }
            return i == n || ByteWords.jsonPlain16(raw + (n - 16))
        }
        #endif
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if !plain(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
                i += 8
            }
            return i == n || plain(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
        }
        if n >= 4 {
            let a = UInt64(raw.loadUnaligned(as: UInt32.self)), b = UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            return plain(a | b << 32)
        }
        for u in p where u < 0x20 || u == 0x22 || u == 0x5C { return false }
        return true
    }

    /// No byte of `x` is below 0x20, a quote or a backslash.
    @inlinable @inline(__always) static func plain(_ x: UInt64) -> Bool {
        // Or-ed before the one branch.
        ByteWords.controlByteFlags(x) | ByteWords.flags(of: 0x22, in: x) | ByteWords.flags(of: 0x5C, in: x) == 0
    }

    /// A JSON string literal of `s`, appended byte by byte: UTF-8 multi-byte sequences never hold
    /// a quote, a backslash or a control byte, so escaping bytes is escaping characters.
    /// Then `suffix`, if given.
    @inlinable
    public static func escape(_ s: String, then suffix: UInt8? = nil, into out: inout ByteSink) {
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ escape(bytes: $0, then: suffix, into: &out) }) { return done }
        var s = s
        s.withUTF8 { escape(bytes: $0, then: suffix, into: &out) }
    }

    /// An object key: the string escaped, then the colon.
    @inlinable
    public static func key(_ s: String, into out: inout ByteSink) {
        escape(s, then: UInt8(ascii: ":"), into: &out)
    }

    /// The bytes of a string, escaped between quotes, then `suffix` if given.
    @inlinable @inline(__always)
    public static func escape(bytes p: UnsafeBufferPointer<UInt8>, then suffix: UInt8? = nil, into out: inout ByteSink) {
        if needsNoEscape(p) {
            // The usual case: the bytes as they are, quoted, in one write.
            out.append(quoted: p, then: suffix)
        } else {
            escapeEach(p, then: suffix, into: &out)
        }
    }

    /// The bytes of a string that needs escaping, byte by byte, between quotes, then `suffix`.
    @usableFromInline @inline(never)
    static func escapeEach(_ p: UnsafeBufferPointer<UInt8>, then suffix: UInt8?, into out: inout ByteSink) {
        out.append(byte: 0x22)
        for u in p {
            switch u {
            case 0x22: out.append(byte: 0x5C); out.append(byte: 0x22)
            case 0x5C: out.append(byte: 0x5C); out.append(byte: 0x5C)
            case 0x0A: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "n"))
            case 0x0D: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "r"))
            case 0x09: out.append(byte: 0x5C); out.append(byte: UInt8(ascii: "t"))
            case 0..<0x20:
                out.literal("\\u00")
                out.append(byte: hexDigit(u >> 4))
                out.append(byte: hexDigit(u & 0xF))
            default: out.append(byte: u)
            }
        }
        out.append(byte: 0x22)
        if let suffix { out.append(byte: suffix) }
    }
}
