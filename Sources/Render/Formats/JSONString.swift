import Dissection

/// JSON string literals, without Foundation: strings escaped straight into a byte sink. The JSON
/// renderer writes its keys and strings with it, and the text tree its quoted previews.
public enum JSONString {
    /// The lower-case hex digit of a value below 16.
    @usableFromInline static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10 }

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
        if ByteWords.jsonPlain(p) {
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
