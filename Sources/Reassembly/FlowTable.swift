import Packets

/// Values by connection key, in an open-addressed table probed linearly from a multiplicative
/// hash of the key's endpoints (`FlowKey.mixed`), at most three quarters full, as a dictionary
/// (half full, the 65,536 closed pairs the connection limit keeps took a table twice as large:
/// 200,000 half-open connections, peak 128 -> 145 MB); a removal shifts the keys
/// after it back (no tombstones). Looked up per packet: a Swift dictionary ran its seeded hasher
/// per lookup and rehashed the keys after each removal (callgrind, a fleet of 10,000 devices:
/// about 380 instructions a lookup, 2,150 a removal).
///
/// The probe reads each slot's hash (`hashes`, 0 for an empty slot) and compares a key only
/// where the hash is the same: 8 bytes a slot, where a key and its optional are 40. (Comparing
/// keys while probing cost about 160 instructions a lookup on a fleet of short connections.)
struct FlowTable<Value> {
    /// Each slot's key's hash with its lowest bit set (never 0), or 0 where the slot is empty:
    /// the one record of which slots are used.
    private var hashes: [UInt64]
    /// Each used slot's key; an empty slot's is `unused`, never read.
    private var keys: [FlowKey]
    private var values: [Value?]
    /// The hash's top bits pick the home slot: 64 - log2(slots).
    private var shift: UInt64
    private(set) var count = 0

    /// What an empty slot's key holds.
    private static var unused: FlowKey {
        let nowhere = Endpoint(address: .v4(0), port: 0)
        return FlowKey(nowhere, nowhere)
    }

    init() {
        hashes = [UInt64](repeating: 0, count: 16)
        keys = [FlowKey](repeating: Self.unused, count: 16)
        values = [Value?](repeating: nil, count: 16)
        shift = 60
    }

    var isEmpty: Bool { count == 0 }

    /// The key's hash as stored: never 0.
    @inline(__always) private static func stored(_ key: FlowKey) -> UInt64 { key.mixed | 1 }

    private func home(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash >> shift)
    }

    /// The slot holding `key`, if any.
    private func slot(_ key: FlowKey) -> Int? {
        let hash = Self.stored(key)
        let mask = hashes.count - 1
        var i = home(hash)
        return hashes.withUnsafeBufferPointer { hashes in
            while true {
                let h = hashes[i]
                if h == 0 { return nil }
                if h == hash, keys[i] == key { return i }
                i = (i + 1) & mask
            }
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
        if (count + 1) * 4 > hashes.count * 3 { grow() }
        let hash = Self.stored(key)
        let mask = hashes.count - 1
        var i = home(hash)
        while hashes[i] != 0 { i = (i + 1) & mask }
        hashes[i] = hash
        keys[i] = key
        values[i] = value
        count += 1
    }

    @discardableResult
    mutating func removeValue(forKey key: FlowKey) -> Value? {
        guard var hole = slot(key) else { return nil }
        let removed = values[hole]
        hashes[hole] = 0
        values[hole] = nil
        count -= 1
        // Backward shift: each key after the hole, up to the next empty slot, moves into the hole
        // when its home is not between the hole and where it is (cyclically).
        let mask = hashes.count - 1
        var i = (hole + 1) & mask
        while hashes[i] != 0 {
            let h = home(hashes[i])
            let stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i)
            if !stays {
                hashes[hole] = hashes[i]
                keys[hole] = keys[i]
                values[hole] = values[i]
                hashes[i] = 0
                values[i] = nil
                hole = i
            }
            i = (i + 1) & mask
        }
        return removed
    }

    mutating func removeAll() {
        for i in hashes.indices where hashes[i] != 0 {
            hashes[i] = 0
            values[i] = nil
        }
        count = 0
    }

    /// Calls `body` with every key and value, in no particular order.
    func forEach(_ body: (FlowKey, Value) throws -> Void) rethrows {
        for i in hashes.indices where hashes[i] != 0 {
            if let v = values[i] { try body(keys[i], v) }
        }
    }

    private mutating func grow() {
        let oldHashes = hashes, oldKeys = keys, oldValues = values
        hashes = [UInt64](repeating: 0, count: oldHashes.count * 2)
        keys = [FlowKey](repeating: Self.unused, count: oldHashes.count * 2)
        values = [Value?](repeating: nil, count: oldHashes.count * 2)
        shift -= 1
        let mask = hashes.count - 1
        for j in oldHashes.indices where oldHashes[j] != 0 {
            let hash = oldHashes[j]
            var i = home(hash)
            while hashes[i] != 0 { i = (i + 1) & mask }
            hashes[i] = hash
            keys[i] = oldKeys[j]
            values[i] = oldValues[j]
        }
    }
}
