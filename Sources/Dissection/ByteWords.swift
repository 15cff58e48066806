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
