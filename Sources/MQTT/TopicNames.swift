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
    private var names = [String](repeating: "", count: 64)

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
        let slot = Int(truncatingIfNeeded: h >> 58)
        let same: Bool? = names[slot].utf8.withContiguousStorageIfAvailable { kept in
            kept.count == n && (n == 0 || memcmp(kept.baseAddress!, bytes.baseAddress!, n) == 0)
        }
        if same == true { return names[slot] }
        let made = String(decoding: bytes, as: UTF8.self)
        names[slot] = made
        return made
    }
}
