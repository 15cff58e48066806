/// A read cursor over bytes a PDU parser was handed.
///
/// `read*` moves the cursor; `peek*` does not. Both return `nil` on short input instead of
/// trapping, so a parser decides what a short PDU means. `offset` counts from the start of
/// the bytes given, so it is directly usable for field ranges.
public struct ByteReader {
    public let bytes: ArraySlice<UInt8>
    /// Offset from the start of `bytes`.
    public private(set) var offset: Int = 0

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset >= bytes.count }

    public func peekUInt8(at relative: Int = 0) -> UInt8? {
        let i = offset + relative
        guard i >= 0, i < bytes.count else { return nil }
        return bytes[bytes.startIndex + i]
    }

    public mutating func readUInt8() -> UInt8? {
        guard let b = peekUInt8() else { return nil }
        offset += 1
        return b
    }

    public mutating func readUInt16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        let s = bytes.startIndex + offset
        offset += 2
        return UInt16(bytes[s]) << 8 | UInt16(bytes[s + 1])
    }

    public mutating func readUInt32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        let s = bytes.startIndex + offset
        offset += 4
        return UInt32(bytes[s]) << 24 | UInt32(bytes[s + 1]) << 16 | UInt32(bytes[s + 2]) << 8 | UInt32(bytes[s + 3])
    }

    public mutating func readUInt64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var v: UInt64 = 0
        let s = bytes.startIndex + offset
        for i in 0..<8 { v = v << 8 | UInt64(bytes[s + i]) }
        offset += 8
        return v
    }

    /// The next `count` bytes as a slice (no copy), or nil when fewer remain.
    public mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        let s = bytes.startIndex + offset
        offset += count
        return bytes[s..<(s + count)]
    }

    /// Everything left.
    public mutating func readRest() -> ArraySlice<UInt8> {
        let s = bytes.startIndex + min(offset, bytes.count)
        offset = bytes.count
        return bytes[s..<bytes.endIndex]
    }

    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        offset += count
        return true
    }
}
