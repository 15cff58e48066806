/// Eight bytes at a time: tests on a `UInt64` of eight bytes that would otherwise take a loop.
public enum ByteWords {
    /// Whether a byte of `x` is zero: `(x - 0x01…01) & ~x & 0x80…80` is non-zero exactly then.
    /// Used on a word masked or XORed so that the bytes sought become zero (x & 0xE0…E0 for the
    /// bytes below 0x20, x ^ 0x22…22 for a quote).
    @inlinable @inline(__always)
    public static func hasZeroByte(_ x: UInt64) -> Bool {
        (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 != 0
    }

    /// Whether a byte of `x` is below 0x20 (a control byte).
    @inlinable @inline(__always)
    public static func hasControlByte(_ x: UInt64) -> Bool { hasZeroByte(x & 0xE0E0_E0E0_E0E0_E0E0) }

    /// Whether a byte of `x` equals `byte`.
    @inlinable @inline(__always)
    public static func has(_ byte: UInt8, in x: UInt64) -> Bool { hasZeroByte(x ^ (0x0101_0101_0101_0101 &* UInt64(byte))) }
}
