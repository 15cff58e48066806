/// Values by an integer key that is never `Int.min` (a stream number, a packet identifier), in an
/// open-addressed table probed from a multiplicative hash of the key. Looked up per reassembly
/// event (a connection's state) and per MQTT acknowledgement (a flow in flight), where a
/// dictionary ran its seeded hasher per lookup, about a hundred instructions. `Int.min` marks an
/// empty slot. An empty table holds no storage until its first value, then one array (keys and
/// values side by side): a connection's table is made and freed with one allocation.
///
/// Inlinable: its users are in other modules, and a generic table called through its
/// unspecialized code would cost more than the hashing it saves.
public struct IntTable<Value> {
    @usableFromInline struct Entry {
        @usableFromInline var key: Int
        @usableFromInline var value: Value?

        @inlinable init(key: Int, value: Value?) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var entries: [Entry] = []
    @usableFromInline var shift: UInt64 = 60
    @usableFromInline var stored = 0
    /// Values held.
    @inlinable public var count: Int { stored }

    public init() {}

    @inlinable func home(_ key: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, if any.
    @inlinable func slot(_ key: Int) -> Int? {
        guard stored > 0 else { return nil }
        let mask = entries.count - 1
        var i = home(key)
        return entries.withUnsafeBufferPointer { entries in
            while true {
                let k = entries[i].key
                if k == key { return i }
                if k == Int.min { return nil }
                i = (i + 1) & mask
            }
        }
    }

    @inlinable public subscript(key: Int) -> Value? {
        get { slot(key).flatMap { entries[$0].value } }
        set {
            if let newValue {
                if let i = slot(key) {
                    entries[i].value = newValue
                } else {
                    insert(key, newValue)
                }
            } else {
                _ = removeValue(forKey: key)
            }
        }
    }

    @inlinable mutating func insert(_ key: Int, _ value: Value) {
        precondition(key != Int.min, "a key is never Int.min")
        if (stored + 1) * 2 > entries.count { grow() }
        let mask = entries.count - 1
        var i = home(key)
        while entries[i].key != Int.min { i = (i + 1) & mask }
        entries[i] = Entry(key: key, value: value)
        stored += 1
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Int) -> Value? {
        guard var hole = slot(key) else { return nil }
        let removed = entries[hole].value
        // Backward-shift deletion: the entries after the hole that could live in it move back, so
        // no probe stops early at the emptied slot.
        let mask = entries.count - 1
        var j = hole
        while true {
            j = (j + 1) & mask
            let k = entries[j].key
            if k == Int.min { break }
            let h = home(k)
            // Whether `h` lies cyclically in (hole, j]: then the entry stays.
            let stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j)
            if !stays {
                entries[hole] = entries[j]
                hole = j
            }
        }
        entries[hole] = Entry(key: Int.min, value: nil)
        stored -= 1
        return removed
    }

    @inlinable mutating func grow() {
        let old = entries
        // From nothing to 8 slots, then doubling.
        let capacity = max(8, old.count * 2)
        entries = [Entry](filling: Entry(key: Int.min, value: nil), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        stored = 0
        for e in old where e.key != Int.min {
            if let v = e.value { insert(e.key, v) }
        }
    }

    /// Every value with its key, in no particular order.
    @inlinable public func forEach(_ body: (Int, Value) -> Void) {
        for e in entries where e.key != Int.min {
            if let v = e.value { body(e.key, v) }
        }
    }

    /// Modifies the value of `key` in place, if there is one.
    @inlinable public mutating func modify(_ key: Int, _ body: (inout Value) -> Void) {
        guard let i = slot(key), entries[i].value != nil else { return }
        body(&entries[i].value!)
    }

    @inlinable public mutating func removeAll() {
        entries = []
        shift = 60
        stored = 0
    }
}

extension IntTable: Sendable where Value: Sendable {}
extension IntTable.Entry: Sendable where Value: Sendable {}
