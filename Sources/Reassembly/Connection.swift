import Packets

/// A tracked TCP connection: its number, its sides and both half-streams. A class, so a segment
/// updates its connection where the table holds it, with one lookup and no copy of its buffers.
final class Connection {
    let stream: Int
    let client: Endpoint
    let server: Endpoint
    let toServer = HalfStream()
    let toClient = HalfStream()
    // Accessed from one thread, one access at a time: no runtime exclusivity checks.
    @exclusivity(unchecked) var lastSeen: Double
    // The reassembler's, on the one thread that reads packets, with plain loads and stores.
    @exclusivity(unchecked) var reset = false
    /// Packets of this connection seen so far: the clock of the reorder window.
    // The reassembler's, on the one thread that reads packets, with plain loads and stores.
    @exclusivity(unchecked) var packets = 0
    /// Segments held back, in capture order, because they acknowledge bytes of the other
    /// direction that the capture has not shown yet (recorded after the reply they caused).
    // The reassembler's, on the one thread that reads packets; no access to it lasts across `handle`.
    @exclusivity(unchecked) var deferred: [HeldBack] = []

    struct HeldBack {
        var segment: TCPSegment
        var origin: CaptureOrigin?
    }

    init(stream: Int, client: Endpoint, server: Endpoint, lastSeen: Double) {
        self.stream = stream
        self.client = client
        self.server = server
        self.lastSeen = lastSeen
    }

    func side(of source: Endpoint) -> FlowSide { source == client ? .clientToServer : .serverToClient }

    subscript(side: FlowSide) -> HalfStream { side == .clientToServer ? toServer : toClient }

    var isFinished: Bool { toServer.finished && toClient.finished }
}
