/// A string as a dictionary key, hashed by FNV-1a over its bytes: the standard hash of a String
/// (SipHash over every byte, then a comparison) cost about 660 instructions per lookup of a topic.
/// Equal keys are equal strings. The tables' topic rows and the names of table records use it.
struct DigestKey: Hashable {
    let name: String
    let digest: UInt64

    init(_ name: String) {
        self.name = name
        digest = Self.fnv1a(name)
    }

    /// FNV-1a over `s`'s UTF-8 bytes, from `h` (the offset basis, or a digest to continue).
    static func fnv1a(_ s: String, from h: UInt64 = 0xCBF2_9CE4_8422_2325) -> UInt64 {
        var h = h
        let done: Bool? = s.utf8.withContiguousStorageIfAvailable { bytes in
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
            return true
        }
        if done == nil {
            for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        }
        return h
    }

    static func == (a: DigestKey, b: DigestKey) -> Bool { a.digest == b.digest && a.name == b.name }
    func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}
