/// Bounded views of payload bytes: text when they are UTF-8, hex otherwise.
public enum Preview {
    /// The value for a payload: `.text` when all of it that is held is valid UTF-8 and
    /// printable enough, else `.bytes`, each cut to `limit` bytes; `length` is the full length.
    public static func value(of bytes: ArraySlice<UInt8>, length: Int, limit: Int) -> FieldValue {
        // A negative limit shows nothing, rather than trapping.
        let shown = bytes.prefix(max(0, limit))
        if let text = utf8Text(shown, allowCutTail: shown.count < bytes.count || shown.count < length) {
            return .text(preview: text, length: length)
        }
        return .bytes(preview: Array(shown), length: length)
    }

    /// Decodes UTF-8 if valid and free of control characters other than tab/newline/CR.
    /// With `allowCutTail`, up to 3 trailing bytes of a sequence cut by the preview limit are dropped.
    public static func utf8Text(_ bytes: ArraySlice<UInt8>, allowCutTail: Bool = false) -> String? {
        bytes.withUnsafeBufferPointer { utf8Text($0, allowCutTail: allowCutTail) }
    }

    /// `utf8Text` of bytes where they lie.
    public static func utf8Text(_ p: UnsafeBufferPointer<UInt8>, allowCutTail: Bool = false) -> String? {
        guard let (count, ascii) = textPrefix(p, allowCutTail: allowCutTail) else { return nil }
        let kept = UnsafeBufferPointer(rebasing: p[..<count])
        return ascii ? asciiString(kept) : String(decoding: kept, as: UTF8.self)
    }

    /// What `utf8Text` keeps of `p`, without making a String: how many leading bytes are the
    /// text and whether they are all ASCII; nil when `p` is not text.
    public static func textPrefix(_ p: UnsafeBufferPointer<UInt8>, allowCutTail: Bool = false) -> (count: Int, ascii: Bool)? {
        guard let base = p.baseAddress else { return (0, true) }
        var end = p.count
        if allowCutTail {
            // Drop an incomplete trailing multi-byte sequence.
            var back = 0
            var i = end
            while i > 0, back < 3, base[i - 1] & 0xC0 == 0x80 { i -= 1; back += 1 }
            if i > 0, base[i - 1] >= 0xC0 {
                let lead = base[i - 1]
                let need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1
                if back < need { end = i - 1 }
            }
        }
        // Control characters other than tab, newline and CR make it binary; then bytes that are not
        // all ASCII are validated as UTF-8 by the standard library. Both over the contiguous bytes,
        // without per-byte bounds checks. Eight bytes at a time while no word holds a byte below
        // 0x20 or DEL; such a word, and the last few bytes, one by one.
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= end {
            let x = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            if ByteWords.controlByteFlags(x) | ByteWords.flags(of: 0x7F, in: x) != 0 { break }
            high |= x
            i += 8
        }
        var highByte: UInt8 = high & 0x8080_8080_8080_8080 != 0 ? 0x80 : 0
        while i < end {
            let b = base[i]
            highByte |= b
            if b < 0x20 || b == 0x7F, b != 0x09 && b != 0x0A && b != 0x0D { return nil }
            i += 1
        }
        if highByte < 0x80 { return (end, true) }
        return String(validating: UnsafeBufferPointer(rebasing: p[..<end]), as: UTF8.self) == nil ? nil : (end, false)
    }

    /// The bytes as a String when they are well-formed UTF-8, else nil. All-ASCII bytes (topics,
    /// names, most payloads) skip the standard library's generic validator.
    public static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { validUTF8($0) }
    }

    /// `validUTF8` over bytes in memory.
    public static func validUTF8(_ p: UnsafeBufferPointer<UInt8>) -> String? {
        var high: UInt8 = 0
        for b in p { high |= b }
        return high < 0x80 ? asciiString(p) : String(validating: p, as: UTF8.self)
    }

    /// ASCII bytes, already checked, as a String.
    private static func asciiString(_ p: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: p.count) { out in
            _ = out.initialize(fromContentsOf: p)
            return p.count
        }
    }

    /// Lower-case hex, no separators.
    public static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits: StaticString = "0123456789abcdef"
        // ASCII digits into one buffer, then one String: appending Characters costs far more.
        return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            digits.withUTF8Buffer { d in
                var i = 0
                for b in bytes {
                    out[i] = d[Int(b >> 4)]
                    out[i + 1] = d[Int(b & 0x0F)]
                    i += 2
                }
            }
            return bytes.count * 2
        }
    }
}
