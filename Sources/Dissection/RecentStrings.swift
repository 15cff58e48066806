/// The Strings a connection made lately from wire bytes (MQTT topic names; AMQP consumer tags,
/// exchanges and routing keys), by a hash of their bytes: bytes seen before get the very String
/// made then, not a new one (an allocation, a copy and a free for a name past 15 bytes; for AMQP,
/// the text check too), and a table that keeps the String finds its row by the String's two
/// words. A value: each copy of a dissector keeps its own.
///
/// A String is kept only when its UTF-8 is the bytes it was made from, and handed out for those
/// bytes alone: `make` must give, for the same bytes, the same String (an escaped one is made
/// each time).
public struct RecentStrings: Sendable {
    /// Pairs of slots (a String is looked for in both of its pair), none until the first String
    /// (a decoder made for one frame costs nothing), then 16, doubled up to
    /// `maxSlots` while Strings keep being replaced (a connection publishing to many topics, a
    /// subscriber receiving them): memory per connection stays small for the many connections
    /// that use a few names. Each slot keeps the bytes' hash, to compare bytes only on a match.
    @usableFromInline var slots: [(hash: UInt64, string: String)] = []
    @usableFromInline var shift: UInt64 = 60
    @usableFromInline var misses = 0
    public static let maxSlots = 512

    public init() {}

    /// The String of `bytes`: the one kept when its UTF-8 is `bytes`, else `make(bytes)`, kept.
    @inlinable
    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, make: (UnsafeBufferPointer<UInt8>) -> String) -> String {
        let n = bytes.count
        var h = UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15
        if n >= 8, let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            h = (h ^ raw.loadUnaligned(as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h = (h ^ raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) &* 0x94D0_49BB_1331_11EB
        } else {
            for b in bytes { h = (h ^ UInt64(b)) &* 0xBF58_476D_1CE4_E5B9 }
        }
        h |= 1 // 0 marks an empty slot
        if slots.isEmpty { slots = [(hash: UInt64, string: String)](filling: (0, ""), count: 16) }
        let first = Int(truncatingIfNeeded: h >> shift) & ~1
        for slot in first...(first + 1) where slots[slot].hash == h {
            // One copy, compared and returned (reading the slot twice retained its String twice).
            let kept = slots[slot].string
            if Self.isUTF8(of: kept, bytes) { return kept }
        }
        let made = make(bytes)
        // A String that is not the bytes' own UTF-8 (an escaped one) would never be found by them.
        guard Self.isUTF8(of: made, bytes) else { return made }
        // The pair's older String moves to its second slot.
        slots[first + 1] = slots[first]
        slots[first] = (h, made)
        misses += 1
        if misses > 4 * slots.count, slots.count < Self.maxSlots {
            // Mostly replacing: twice the slots, empty (Strings are made again as they come).
            slots = [(hash: UInt64, string: String)](filling: (0, ""), count: slots.count * 2)
            shift -= 1
            misses = 0
        }
        return made
    }

    /// Whether `string`'s UTF-8 is `bytes`.
    @inlinable @inline(__always)
    static func isUTF8(of string: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { s in
            s.count == bytes.count && ByteWords.equal(s, bytes)
        } == true
    }

    /// The String of printable-ASCII (or any valid UTF-8) `bytes`.
    @inlinable
    public mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        string(bytes) { String(decoding: $0, as: UTF8.self) }
    }
}
