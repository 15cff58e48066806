import Packets

/// A TCP connection's address/port pair, the same for both directions.
public struct FlowKey: Hashable, Sendable {
    public var low: Endpoint
    public var high: Endpoint

    public init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }
}
