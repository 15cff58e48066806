/// A read cursor over bytes a PDU parser was handed.
///
/// `read*` moves the cursor; `peek*` does not. Both return `nil` on short input instead of
/// trapping, so a parser decides what a short PDU means. `offset` counts from the start of
/// the bytes given, so it is directly usable for field ranges.
public struct ByteReader {
    public let bytes: ArraySlice<UInt8>
    /// Where the next read starts, from the start of `bytes` (`offset`); usable from inline code,
    /// so the reads are inlined into the decoders of other modules.
    @usableFromInline var cursor: Int = 0
    @inlinable public var offset: Int { cursor }

    @inlinable public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    @inlinable public init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    @inlinable public var remaining: Int { bytes.count - offset }
    @inlinable public var isAtEnd: Bool { offset >= bytes.count }

    @inlinable @inline(__always) public func peekUInt8(at relative: Int = 0) -> UInt8? {
        let i = offset + relative
        guard i >= 0, i < bytes.count else { return nil }
        return bytes[bytes.startIndex + i]
    }

    @inlinable @inline(__always) public mutating func readUInt8() -> UInt8? {
        guard let b = peekUInt8() else { return nil }
        cursor += 1
        return b
    }

    @inlinable @inline(__always) public mutating func readUInt16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        let s = bytes.startIndex + offset
        cursor += 2
        return UInt16(bytes[s]) << 8 | UInt16(bytes[s + 1])
    }

    @inlinable @inline(__always) public mutating func readUInt32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        let s = bytes.startIndex + offset
        cursor += 4
        return UInt32(bytes[s]) << 24 | UInt32(bytes[s + 1]) << 16 | UInt32(bytes[s + 2]) << 8 | UInt32(bytes[s + 3])
    }

    @inlinable @inline(__always) public mutating func readUInt64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var v: UInt64 = 0
        let s = bytes.startIndex + offset
        for i in 0..<8 { v = v << 8 | UInt64(bytes[s + i]) }
        cursor += 8
        return v
    }

    /// The next `count` bytes as a slice (no copy), or nil when fewer remain.
    @inlinable @inline(__always) public mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        let s = bytes.startIndex + offset
        cursor += count
        return bytes[s..<(s + count)]
    }

    /// Everything left.
    @inlinable public mutating func readRest() -> ArraySlice<UInt8> {
        let s = bytes.startIndex + min(offset, bytes.count)
        cursor = bytes.count
        return bytes[s..<bytes.endIndex]
    }

    @inlinable public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        cursor += count
        return true
    }
}
