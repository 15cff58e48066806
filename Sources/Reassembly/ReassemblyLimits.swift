/// The bounds that keep reassembly's memory flat, whatever the capture holds.
/// Defaults are documented in the README; each is a command-line option.
///
/// A hole (bytes missing before held data) is given up as a gap, and the held data delivered,
/// at the first of: the reorder window closing on bytes the other side acknowledged (they
/// reached the receiver, yet the capture has not shown them within `reorderPackets` packets of
/// the connection or `reorderTimeout` seconds); `holeTimeout` seconds of capture time for a
/// hole no acknowledgement explains; a buffer limit; the end of the connection.
///
/// Within the reorder window, a segment that acknowledges bytes of the other direction not yet
/// seen is held back too, so that a reply is delivered after the request it answers however
/// the capture ordered them.
///
/// Besides the held bytes, each direction keeps its most recently delivered segments (up to
/// 64 KiB and 16 segments, as slices of their packets) to compare retransmissions with; over all
/// connections these are bounded by `maxBufferedBytesTotal` as well, counted separately.
public struct ReassemblyLimits: Sendable {
    /// Out-of-order bytes held for one direction before the hole is given up as a gap.
    public var maxBufferedBytesPerDirection: Int
    /// Out-of-order bytes held over all connections.
    public var maxBufferedBytesTotal: Int
    /// Connections tracked at once; beyond it, the least recently active are flushed.
    public var maxConnections: Int
    /// Seconds of capture time without a packet after which a connection is flushed.
    public var idleTimeout: Double
    /// Seconds of capture time that data may wait behind a hole no acknowledgement has explained
    /// (a one-way capture, a peer whose packets were not captured) before the hole is given up
    /// as a gap. Default 10: longer than TCP's retransmission backoff over a few lost tries.
    public var holeTimeout: Double
    /// Packets of a connection for which bytes that the other side has acknowledged are
    /// awaited (a capture may record a segment after the acknowledgement of it, or after the
    /// reply it caused) before they are given up as a gap.
    public var reorderPackets: Int
    /// Seconds of capture time for the same wait: whichever of the two ends first ends it.
    public var reorderTimeout: Double

    public init(maxBufferedBytesPerDirection: Int = 4 << 20, maxBufferedBytesTotal: Int = 64 << 20,
                maxConnections: Int = 65_536, idleTimeout: Double = 300, holeTimeout: Double = 10,
                reorderPackets: Int = 4096, reorderTimeout: Double = 3) {
        self.maxBufferedBytesPerDirection = maxBufferedBytesPerDirection
        self.maxBufferedBytesTotal = maxBufferedBytesTotal
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.holeTimeout = holeTimeout
        self.reorderPackets = reorderPackets
        self.reorderTimeout = reorderTimeout
    }
}
