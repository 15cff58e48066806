import Packets

/// A TCP connection's address/port pair, the same for both directions.
public struct FlowKey: Hashable, Sendable {
    public var low: Endpoint
    public var high: Endpoint

    public init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }

    /// The fields folded into one word first, then hashed: the hasher's work grows with the bytes
    /// fed to it, and feeding it both endpoints field by field cost about 450 instructions per
    /// lookup (one or two per packet). Equal keys fold to equal words.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(Self.fold(low) &* 0x9E37_79B9_7F4A_7C15 ^ Self.fold(high))
    }

    /// The key's endpoints folded and mixed into 64 bits, no hasher run: `FlowTable` takes its
    /// top bits as a key's home slot.
    @inline(__always) var mixed: UInt64 {
        (Self.fold(low) &* 0x9E37_79B9_7F4A_7C15 ^ Self.fold(high)) &* 0xD6E8_FEB8_6659_FD93
    }

    private static func fold(_ e: Endpoint) -> UInt64 {
        let port = UInt64(e.port)
        switch e.address {
        case .v4(let a): return UInt64(a) << 16 | port
        case .v6(let hi, let lo): return (hi &* 0xBF58_476D_1CE4_E5B9 ^ lo) &* 0x94D0_49BB_1331_11EB ^ port ^ 1 << 63
        }
    }
}
