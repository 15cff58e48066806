#if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
import _Builtin_intrinsics.intel
#endif

/// Eight bytes at a time: tests on a `UInt64` of eight bytes that would otherwise take a loop.
///
/// The `…Flags` forms give a word with a high bit set when the test holds for some byte and none
/// set when it holds for none (which bits, beyond the first, is not exact): several tests or-ed
/// together then take one branch.
public enum ByteWords {
    /// `(x - 0x01…01) & ~x & 0x80…80`: non-zero exactly when a byte of `x` is zero. Used on a word
    /// masked or XORed so that the bytes sought become zero (x & 0xE0…E0 for the bytes below
    /// 0x20, x ^ 0x22…22 for a quote).
    @inlinable @inline(__always)
    public static func zeroByteFlags(_ x: UInt64) -> UInt64 {
        (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
    }

    /// Non-zero when a byte of `x` is below 0x20 (a control byte).
    @inlinable @inline(__always)
    public static func controlByteFlags(_ x: UInt64) -> UInt64 { zeroByteFlags(x & 0xE0E0_E0E0_E0E0_E0E0) }

    /// Non-zero when a byte of `x` equals `byte`.
    @inlinable @inline(__always)
    public static func flags(of byte: UInt8, in x: UInt64) -> UInt64 { zeroByteFlags(x ^ (0x0101_0101_0101_0101 &* UInt64(byte))) }

    /// Whether a byte of `x` is zero.
    @inlinable @inline(__always)
    public static func hasZeroByte(_ x: UInt64) -> Bool { zeroByteFlags(x) != 0 }

    /// Whether a byte of `x` is below 0x20 (a control byte).
    @inlinable @inline(__always)
    public static func hasControlByte(_ x: UInt64) -> Bool { controlByteFlags(x) != 0 }

    /// Whether a byte of `x` equals `byte`.
    @inlinable @inline(__always)
    public static func has(_ byte: UInt8, in x: UInt64) -> Bool { flags(of: byte, in: x) != 0 }
}

extension ByteWords {
    /// Whether `a` and `b`, of one length, hold the same bytes: eight at a time, the last eight
    /// overlapping those before (names and topics are tens of bytes: a call to memcmp cost more).
    @inlinable
    public static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = a.count
        guard n == b.count else { return false }
        guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        let x = UnsafeRawPointer(pa), y = UnsafeRawPointer(pb)
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if x.loadUnaligned(fromByteOffset: i, as: UInt64.self) != y.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
                i += 8
            }
            return i == n || x.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        for i in 0..<n where pa[i] != pb[i] { return false }
        return true
    }

    /// Whether every byte is printable ASCII other than a quote and a backslash (0x20...0x7E
    /// without 0x22 and 0x5C): text that is its own UTF-8 and its own JSON and text-tree string,
    /// as most payloads are. One pass (the general path took a pass for the text check and
    /// another for escapes).
    @inlinable
    public static func isPlainASCII(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        isPrintableASCII(p, without: 0x22, 0x5C)
    }

    /// Whether every byte is printable ASCII (0x20...0x7E) other than `a` and `b` (a quote and a
    /// backslash for `isPlainASCII`; the wildcards for an MQTT topic name the fast paths take).
    /// Sixteen or eight bytes at a time, the last ones overlapping those before.
    @inlinable
    public static func isPrintableASCII(_ p: UnsafeBufferPointer<UInt8>, without a: UInt8, _ b: UInt8) -> Bool {
        guard let base = p.baseAddress else { return true }
        let n = p.count
        let raw = UnsafeRawPointer(base)
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
        if n >= 16 {
            var i = 0
            while i + 16 <= n {
                if !printable16(raw + i, without: a, b) { return false }
                i += 16
            }
            return i == n || printable16(raw + (n - 16), without: a, b)
        }
        #endif
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if notPrintableFlags(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), without: a, b) != 0 { return false }
                i += 8
            }
            return i == n || notPrintableFlags(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self), without: a, b) == 0
        }
        for c in p where c &- 0x20 >= 0x5F || c == a || c == b { return false }
        return true
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
    /// Sixteen bytes at `p` are printable ASCII other than `a` and `b` (see `isPrintableASCII`):
    /// four SSE2 comparisons, where the word-at-a-time test takes about 40 operations. Compared
    /// as signed bytes, those from 0x80 up are below 0x20.
    @inlinable @inline(__always)
    static func printable16(_ p: UnsafeRawPointer, without a: UInt8, _ b: UInt8) -> Bool {
        let v = _mm_loadu_si128(p.assumingMemoryBound(to: __m128i.self))
        let outside = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpgt_epi8(v, _mm_set1_epi8(0x7E)))
        let special = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(CChar(bitPattern: a))),
                                   _mm_cmpeq_epi8(v, _mm_set1_epi8(CChar(bitPattern: b))))
        return _mm_movemask_epi8(_mm_or_si128(outside, special)) == 0
    }
    #endif

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
    /// Sixteen bytes at `p` hold no byte below 0x20, no quote and no backslash: none that a JSON
    /// string escapes (bytes from 0x80 up are UTF-8 and stay). Compared unsigned: a byte is below
    /// 0x20 when the smaller of it and 0x1F is itself.
    @inlinable @inline(__always)
    public static func jsonPlain16(_ p: UnsafeRawPointer) -> Bool {
        let v = _mm_loadu_si128(p.assumingMemoryBound(to: __m128i.self))
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v)
        let special = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C)))
        return _mm_movemask_epi8(_mm_or_si128(control, special)) == 0
    }
    #endif

    /// Non-zero when a byte of `x` is below 0x20, above 0x7E, `a` or `b`. A byte below 0x20
    /// borrows into its high bit; one above 0x7E has or gets it when 1 is added.
    @inlinable @inline(__always)
    static func notPrintableFlags(_ x: UInt64, without a: UInt8, _ b: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below = (x &- ones &* 0x20) & ~x
        let above = (x &+ ones) | x
        return (below | above | flags(of: a, in: x) | flags(of: b, in: x)) & highs
    }

    /// Whether no byte of `p` is a control byte, a quote or a backslash. No byte-by-byte loop
    /// from 4 bytes up: sixteen bytes at a time on x86-64, else eight, the last ones overlapping
    /// those before; 4 to 7 bytes (short keys) as two overlapping 4-byte words.
    @inlinable
    public static func jsonPlain(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let n = p.count
        let raw = UnsafeRawPointer(base)
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
        // Payload previews run to hundreds of bytes: sixteen at a time (SSE2), the last sixteen
        // overlapping the ones before.
        if n >= 16 {
            var i = 0
            while i + 16 <= n {
                if !jsonPlain16(raw + i) { return false }
                i += 16
            }
            return i == n || jsonPlain16(raw + (n - 16))
        }
        #endif
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if !jsonPlainWord(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
                i += 8
            }
            return i == n || jsonPlainWord(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
        }
        if n >= 4 {
            let a = UInt64(raw.loadUnaligned(as: UInt32.self)), b = UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            return jsonPlainWord(a | b << 32)
        }
        for u in p where u < 0x20 || u == 0x22 || u == 0x5C { return false }
        return true
    }

    /// No byte of `x` is below 0x20, a quote or a backslash.
    @inlinable @inline(__always) static func jsonPlainWord(_ x: UInt64) -> Bool {
        // Or-ed before the one branch.
        controlByteFlags(x) | flags(of: 0x22, in: x) | flags(of: 0x5C, in: x) == 0
    }
}
