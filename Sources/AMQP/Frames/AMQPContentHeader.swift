import Dissection

/// A content header frame's payload (AMQP 0-9-1 §4.2.6.1), as read: class id, weight, body
/// size, property flags and the properties they say are present. Every field keeps its byte
/// range (offsets from the frame's first byte); fields the frame did not reach are nil.
public struct AMQPContentHeader: Sendable, Equatable {
    public var classID: Ranged<UInt16>?
    /// Unused by the protocol; must be zero.
    public var weight: Ranged<UInt16>?
    public var bodySize: Ranged<UInt64>?
    /// The property flag words; nil when the frame ended inside them or they ran on too long.
    public var propertyFlags: Ranged<AMQPPropertyFlags>?
    /// The properties of basic (the only class with any) that were present and read.
    public var properties = AMQPBasicProperties()
    /// The bytes the properties were read from (up to where reading stopped); nil when the
    /// header ended before them.
    public var propertiesRange: Range<Int>?

    public init() {}

    /// The class the content belongs to (`basic`), open: any id is kept.
    public var contentClass: AMQPClassID? { classID.map { AMQPClassID(rawValue: $0.value) } }
}

/// Property flags (AMQP 0-9-1 §4.2.6.1): 15 presence bits per 16-bit word, most significant
/// first; bit 0 of a word says another word follows. Flag `i` is bit `15 - i % 15` of word `i / 15`.
public struct AMQPPropertyFlags: Sendable, Equatable {
    public var words: [UInt16]

    public init(words: [UInt16]) {
        self.words = words
    }

    /// How many flags the words carry.
    @inlinable public var count: Int { words.count * 15 }

    @inlinable public subscript(i: Int) -> Bool { words[i / 15] >> UInt16(15 - i % 15) & 1 == 1 }

    /// Whether flag `i` is carried and set.
    @inline(__always)
    @inlinable public func isSet(_ i: Int) -> Bool { i < count && self[i] }

    /// How many properties are flagged present.
    public var setCount: Int { words.reduce(0) { $0 + ($1 & 0xFFFE).nonzeroBitCount } }
}
