/// The bounds that keep reassembly's memory flat, whatever the capture holds.
/// Defaults are documented in the README; each is a command-line option.
public struct ReassemblyLimits: Sendable {
    /// Out-of-order bytes held for one direction before the hole is given up as a gap.
    public var maxBufferedBytesPerDirection: Int
    /// Out-of-order bytes held over all connections.
    public var maxBufferedBytesTotal: Int
    /// Connections tracked at once; beyond it, the least recently active are flushed.
    public var maxConnections: Int
    /// Seconds of capture time without a packet after which a connection is flushed.
    public var idleTimeout: Double

    public init(maxBufferedBytesPerDirection: Int = 4 << 20, maxBufferedBytesTotal: Int = 64 << 20,
                maxConnections: Int = 65_536, idleTimeout: Double = 300) {
        self.maxBufferedBytesPerDirection = maxBufferedBytesPerDirection
        self.maxBufferedBytesTotal = maxBufferedBytesTotal
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
    }
}
