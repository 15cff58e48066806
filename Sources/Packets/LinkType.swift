/// A capture's link-layer header type (libpcap's DLT/LINKTYPE values).
/// Open: unknown values are kept and printed by number.
public struct LinkType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// BSD loopback: a 4-byte address family in the capturing host's byte order.
    public static let null = LinkType(rawValue: 0)
    public static let ethernet = LinkType(rawValue: 1)
    /// Raw IP as libpcap reports it on most systems (DLT_RAW).
    public static let rawDLT = LinkType(rawValue: 12)
    /// Raw IP, DLT_RAW on OpenBSD.
    public static let rawDLTOpenBSD = LinkType(rawValue: 14)
    /// Raw IP as stored in files (LINKTYPE_RAW).
    public static let raw = LinkType(rawValue: 101)
    /// OpenBSD loopback: a 4-byte address family in network byte order.
    public static let loop = LinkType(rawValue: 108)
    /// Linux cooked capture v1 (`-i any`).
    public static let linuxSLL = LinkType(rawValue: 113)
    public static let ipv4 = LinkType(rawValue: 228)
    public static let ipv6 = LinkType(rawValue: 229)
    /// Linux cooked capture v2.
    public static let linuxSLL2 = LinkType(rawValue: 276)

    public var isSupported: Bool {
        [.null, .ethernet, .rawDLT, .rawDLTOpenBSD, .raw, .loop, .linuxSLL, .ipv4, .ipv6, .linuxSLL2].contains(self)
    }

    public var description: String {
        switch self {
        case .null: return "BSD loopback (NULL)"
        case .ethernet: return "Ethernet"
        case .rawDLT, .rawDLTOpenBSD, .raw: return "raw IP"
        case .loop: return "OpenBSD loopback (LOOP)"
        case .linuxSLL: return "Linux cooked (SLL)"
        case .linuxSLL2: return "Linux cooked v2 (SLL2)"
        case .ipv4: return "raw IPv4"
        case .ipv6: return "raw IPv6"
        default: return "link type \(rawValue) (unknown)"
        }
    }
}
