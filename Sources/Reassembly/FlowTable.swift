/// Values by connection key, in an open-addressed table probed linearly from a multiplicative
/// hash of the key's endpoints (`FlowKey.mixed`), at most three quarters full, as a dictionary
/// (half full, the 65,536 closed pairs the connection limit keeps took a table twice as large:
/// 200,000 half-open connections, peak 128 -> 145 MB); a removal shifts the keys
/// after it back (no tombstones). Looked up per packet: a Swift dictionary ran its seeded hasher
/// per lookup and rehashed the keys after each removal (callgrind, a fleet of 10,000 devices:
/// about 380 instructions a lookup, 2,150 a removal).
struct FlowTable<Value> {
    private var keys: [FlowKey?]
    private var values: [Value?]
    /// The hash's top bits pick the home slot: 64 - log2(slots).
    private var shift: UInt64
    private(set) var count = 0

    init() {
        keys = [FlowKey?](repeating: nil, count: 16)
        values = [Value?](repeating: nil, count: 16)
        shift = 60
    }

    var isEmpty: Bool { count == 0 }

    private func home(_ key: FlowKey) -> Int {
        Int(truncatingIfNeeded: key.mixed >> shift)
    }

    /// The slot holding `key`, if any.
    private func slot(_ key: FlowKey) -> Int? {
        let mask = keys.count - 1
        var i = home(key)
        return keys.withUnsafeBufferPointer { keys in
            while let k = keys[i] {
                if k == key { return i }
                i = (i + 1) & mask
            }
            return nil
        }
    }

    subscript(key: FlowKey) -> Value? {
        get { slot(key).flatMap { values[$0] } }
        set {
            if let newValue { insert(key, newValue) } else { removeValue(forKey: key) }
        }
    }

    private mutating func insert(_ key: FlowKey, _ value: Value) {
        if let i = slot(key) {
            values[i] = value
            return
        }
        if (count + 1) * 4 > keys.count * 3 { grow() }
        let mask = keys.count - 1
        var i = home(key)
        while keys[i] != nil { i = (i + 1) & mask }
        keys[i] = key
        values[i] = value
        count += 1
    }

    @discardableResult
    mutating func removeValue(forKey key: FlowKey) -> Value? {
        guard var hole = slot(key) else { return nil }
        let removed = values[hole]
        keys[hole] = nil
        values[hole] = nil
        count -= 1
        // Backward shift: each key after the hole, up to the next empty slot, moves into the hole
        // when its home is not between the hole and where it is (cyclically).
        let mask = keys.count - 1
        var i = (hole + 1) & mask
        while let k = keys[i] {
            let h = home(k)
            let stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i)
            if !stays {
                keys[hole] = k
                values[hole] = values[i]
                keys[i] = nil
                values[i] = nil
                hole = i
            }
            i = (i + 1) & mask
        }
        return removed
    }

    mutating func removeAll() {
        for i in keys.indices where keys[i] != nil {
            keys[i] = nil
            values[i] = nil
        }
        count = 0
    }

    /// Calls `body` with every key and value, in no particular order.
    func forEach(_ body: (FlowKey, Value) throws -> Void) rethrows {
        for i in keys.indices {
            if let k = keys[i], let v = values[i] { try body(k, v) }
        }
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = [FlowKey?](repeating: nil, count: oldKeys.count * 2)
        values = [Value?](repeating: nil, count: oldKeys.count * 2)
        shift -= 1
        let mask = keys.count - 1
        for j in oldKeys.indices {
            guard let k = oldKeys[j] else { continue }
            var i = home(k)
            while keys[i] != nil { i = (i + 1) & mask }
            keys[i] = k
            values[i] = oldValues[j]
        }
    }
}
