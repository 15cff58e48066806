/// A key that carries its own 64-bit digest (FNV-1a over its bytes, `DigestKey`): a table can
/// find it by the digest alone, then compare.
protocol DigestHashed: Equatable {
    var digest: UInt64 { get }
}

extension DigestKey: DigestHashed {}

/// Rows by a key with its own digest, in insertion order, found through an open-addressed index
/// probed by that digest. A Swift dictionary of the same keys hashed the digest again with its
/// seeded hasher per lookup, about 250 instructions a topic; here a lookup is a multiply, a probe
/// or two, and the key comparison. Rows are not removed one by one; the table can be emptied.
struct DigestTable<Key: DigestHashed, Value> {
    private(set) var keys: [Key] = []
    /// Each key's row, at the key's index.
    var values: [Value] = []
    /// Indices into `keys`, or -1; a power of two long, at most half full.
    private var slots = [Int32](repeating: -1, count: 16)
    private var shift = 60

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    /// Where `key`'s row is, if it has one.
    func index(forKey key: Key) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: (key.digest &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let e = Int(slots[i])
                if e < 0 { return nil }
                if keys[e] == key { return e }
                i = (i + 1) & mask
            }
        }
    }

    subscript(key: Key) -> Value? {
        index(forKey: key).map { values[$0] }
    }

    /// Adds a row for `key`, which has none.
    mutating func append(_ key: Key, _ value: Value) {
        if (keys.count + 1) * 2 > slots.count { grow() }
        keys.append(key)
        values.append(value)
        place(keys.count - 1)
    }

    private mutating func place(_ index: Int) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: (keys[index].digest &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = Int32(index)
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        shift -= 1
        for index in keys.indices { place(index) }
    }

    /// Empties the table, keeping its room.
    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = -1 }
    }

    /// The rows with their keys, in insertion order.
    var rows: Zip2Sequence<[Key], [Value]> { zip(keys, values) }
}
