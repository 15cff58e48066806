/// Values by a String's two words (the String itself, read as two `UInt64`s): the names the
/// tables and the broker models count by mostly come as the very same String each time (a literal or a spec's name for
/// a kind, one String per topic from a connection's decoder), found here without reading their bytes. Each slot keeps its String,
/// so equal words are that very string (a string of up to 15 bytes is held in its words: equal
/// words, equal bytes). An equal string made anew has other words and misses: the caller then
/// finds the value its own way, and remembers it.
public struct StringWordsCache<Value> {
    @usableFromInline var slots: [(name: String, value: Value?)]
    @usableFromInline let shift: UInt64

    /// `count`: a power of two.
    @inlinable public init(slots count: Int) {
        slots = [(name: String, value: Value?)](filling: ("", nil), count: count)
        shift = UInt64(64 - count.trailingZeroBitCount)
    }

    @inlinable @inline(__always)
    static func words(_ s: String) -> (UInt64, UInt64) {
        unsafeBitCast(s, to: (UInt64, UInt64).self)
    }

    @inlinable @inline(__always)
    func slot(_ w: (UInt64, UInt64)) -> Int {
        Int(truncatingIfNeeded: ((w.0 ^ w.1) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The value remembered for this very String, if any.
    @inlinable @inline(__always)
    public func value(for name: String) -> Value? {
        let w = Self.words(name)
        let entry = slots[slot(w)]
        let kept = Self.words(entry.name)
        return kept.0 == w.0 && kept.1 == w.1 ? entry.value : nil
    }

    @inlinable @inline(__always)
    public mutating func remember(_ name: String, _ value: Value) {
        slots[slot(Self.words(name))] = (name, value)
    }
}

/// Whether `a` and `b` are the very same String (or equal strings of up to 15 bytes): their two
/// words compared, not their bytes. False says nothing: equal strings made apart differ here.
@inlinable @inline(__always)
public func isSameString(_ a: String, _ b: String) -> Bool {
    let x = unsafeBitCast(a, to: (UInt64, UInt64).self), y = unsafeBitCast(b, to: (UInt64, UInt64).self)
    return x.0 == y.0 && x.1 == y.1
}
