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
///
/// Up to four words, held inline (the decoder reads no more: no class defines more than 15
/// properties); an array of them cost an allocation per content header.
public struct AMQPPropertyFlags: Sendable, Equatable {
    /// The words, the first in the high 16 bits.
    @usableFromInline var packed: UInt64
    /// How many words were read (1 to 4).
    public let wordCount: Int

    /// The first four of `words`.
    public init(words: [UInt16]) {
        var packed: UInt64 = 0
        for (i, word) in words.prefix(4).enumerated() { packed |= UInt64(word) << UInt64(48 - 16 * i) }
        self.packed = packed
        self.wordCount = min(words.count, 4)
    }

    /// `wordCount` words (1 to 4), the first in the high 16 bits of `packed`.
    package init(packed: UInt64, wordCount: Int) {
        self.packed = packed
        self.wordCount = wordCount
    }

    /// Word `i` (0 to `wordCount - 1`).
    @inlinable @inline(__always) public func word(_ i: Int) -> UInt16 { UInt16(truncatingIfNeeded: packed >> UInt64(48 - 16 * i)) }

    public var words: [UInt16] { (0..<wordCount).map(word) }

    /// How many flags the words carry.
    @inlinable public var count: Int { wordCount * 15 }

    @inlinable @inline(__always) public subscript(i: Int) -> Bool { word(i / 15) >> UInt16(15 - i % 15) & 1 == 1 }

    /// Whether flag `i` is carried and set.
    @inline(__always)
    @inlinable public func isSet(_ i: Int) -> Bool { i < count && self[i] }

    /// How many properties are flagged present.
    public var setCount: Int { (0..<wordCount).reduce(0) { $0 + (word($1) & 0xFFFE).nonzeroBitCount } }
}
