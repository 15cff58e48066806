/// Pieces of text made once per process and never freed, read without reference counting: the
/// lines and members a written fast path appends for nearly every PDU (an MQTT fixed header's
/// lines, a content header's property-flag lines). Reading a String or an array out of a table
/// retains and releases its storage, about 40 instructions a read; these are plain pointers.
///
/// Only for tables made once (static lets): each piece is allocated for good.
// Unchecked: a pointer to bytes written once at creation and never changed or freed.
public struct ImmortalBytes: @unchecked Sendable {
    public let base: UnsafePointer<UInt8>
    public let count: Int

    public init(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    public init(bytes: [UInt8]) {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        p.initialize(from: bytes, count: bytes.count)
        base = UnsafePointer(p)
        count = bytes.count
    }

    @inlinable public var buffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
}

/// A fixed list of `ImmortalBytes`, itself made once and never freed, indexed without reference
/// counting (an array of them would still be retained around a read).
// Unchecked: a pointer to pieces written once at creation and never changed or freed.
public struct ImmortalTable: @unchecked Sendable {
    @usableFromInline let base: UnsafePointer<ImmortalBytes>
    public let count: Int

    public init(_ texts: [String]) {
        self.init(texts.map(ImmortalBytes.init))
    }

    public init(_ items: [ImmortalBytes]) {
        let p = UnsafeMutablePointer<ImmortalBytes>.allocate(capacity: max(items.count, 1))
        p.initialize(from: items, count: items.count)
        base = UnsafePointer(p)
        count = items.count
    }

    @inlinable public subscript(i: Int) -> ImmortalBytes {
        precondition(i >= 0 && i < count, "ImmortalTable index out of range")
        return base[i]
    }
}

extension ByteSink {
    @inlinable @inline(__always)
    public mutating func append(_ piece: ImmortalBytes) {
        append(bytes: piece.buffer)
    }
}
