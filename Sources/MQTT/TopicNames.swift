#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The topic names a connection published to lately, by a hash of their bytes: a PUBLISH to a
/// topic seen before gets the very String made then, not a new one (an allocation, a copy and a
/// free for a name past 15 bytes), and a table that keeps the String finds its row by the
/// String's two words. A value: each copy of a dissector keeps its own.
struct TopicNames {
    /// Pairs of slots (a name is looked for in both of its pair), 16 at first, doubled up to
    /// `maxSlots` while names keep being replaced (a connection publishing to many topics, a
    /// subscriber receiving them): memory per connection stays small for the many connections
    /// that use a few topics. Each slot keeps the name's hash, to compare bytes only on a match.
    private var slots = [(hash: UInt64, name: String)](repeating: (0, ""), count: 16)
    private var shift: UInt64 = 60
    private var misses = 0
    static let maxSlots = 512

    /// The name of the topic whose bytes are `bytes` (printable ASCII: the fast paths take no other).
    mutating func name(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
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
        let first = Int(truncatingIfNeeded: h >> shift) & ~1
        for slot in first...(first + 1) where slots[slot].hash == h {
            let same: Bool? = slots[slot].name.utf8.withContiguousStorageIfAvailable { kept in
                kept.count == n && (n == 0 || memcmp(kept.baseAddress!, bytes.baseAddress!, n) == 0)
            }
            if same == true { return slots[slot].name }
        }
        let made = String(decoding: bytes, as: UTF8.self)
        // The pair's older name moves to its second slot.
        slots[first + 1] = slots[first]
        slots[first] = (h, made)
        misses += 1
        if misses > 4 * slots.count, slots.count < Self.maxSlots {
            // Mostly replacing: twice the slots, empty (names are made again as they come).
            slots = [(hash: UInt64, name: String)](repeating: (0, ""), count: slots.count * 2)
            shift -= 1
            misses = 0
        }
        return made
    }
}
