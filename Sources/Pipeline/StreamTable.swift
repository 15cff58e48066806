/// Values by stream number, in an open-addressed table probed from a multiplicative hash of the
/// number. Looked up per reassembly event (a connection's state), where a dictionary
/// ran its seeded hasher per lookup, about a hundred instructions. Stream numbers are never
/// negative; `Int.min` marks an empty slot.
struct StreamTable<Value> {
    private var keys = [Int](repeating: Int.min, count: 16)
    private var values = [Value?](repeating: nil, count: 16)
    private var shift: UInt64 = 60
    private(set) var count = 0

    private func home(_ key: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, if any.
    private func slot(_ key: Int) -> Int? {
        let mask = keys.count - 1
        var i = home(key)
        return keys.withUnsafeBufferPointer { keys in
            while true {
                let k = keys[i]
                if k == key { return i }
                if k == Int.min { return nil }
                i = (i + 1) & mask
            }
        }
    }

    subscript(key: Int) -> Value? {
        get { slot(key).flatMap { values[$0] } }
        set {
            if let newValue {
                if let i = slot(key) {
                    values[i] = newValue
                } else {
                    insert(key, newValue)
                }
            } else {
                _ = removeValue(forKey: key)
            }
        }
    }

    private mutating func insert(_ key: Int, _ value: Value) {
        precondition(key != Int.min, "a stream number is never Int.min")
        if (count + 1) * 2 > keys.count { grow() }
        let mask = keys.count - 1
        var i = home(key)
        while keys[i] != Int.min { i = (i + 1) & mask }
        keys[i] = key
        values[i] = value
        count += 1
    }

    @discardableResult
    mutating func removeValue(forKey key: Int) -> Value? {
        guard var hole = slot(key) else { return nil }
        let removed = values[hole]
        // Backward-shift deletion: the entries after the hole that could live in it move back, so
        // no probe stops early at the emptied slot.
        let mask = keys.count - 1
        var j = hole
        while true {
            j = (j + 1) & mask
            let k = keys[j]
            if k == Int.min { break }
            let h = home(k)
            // Whether `h` lies cyclically in (hole, j]: then the entry stays.
            let stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j)
            if !stays {
                keys[hole] = k
                values[hole] = values[j]
                hole = j
            }
        }
        keys[hole] = Int.min
        values[hole] = nil
        count -= 1
        return removed
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = [Int](repeating: Int.min, count: oldKeys.count * 2)
        values = [Value?](repeating: nil, count: oldKeys.count * 2)
        shift -= 1
        count = 0
        for (k, v) in zip(oldKeys, oldValues) where k != Int.min {
            if let v { insert(k, v) }
        }
    }
}
