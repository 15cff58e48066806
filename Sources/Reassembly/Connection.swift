import Packets

/// A tracked TCP connection: its number, its sides and both half-streams. A class, so a segment
/// updates its connection where the table holds it, with one lookup and no copy of its buffers.
final class Connection {
    let stream: Int
    let client: Endpoint
    let server: Endpoint
    // Accessed from one thread, one access at a time: no runtime exclusivity checks.
    @exclusivity(unchecked) var toServer = HalfStream()
    @exclusivity(unchecked) var toClient = HalfStream()
    @exclusivity(unchecked) var lastSeen: Double
    @exclusivity(unchecked) var reset = false

    init(stream: Int, client: Endpoint, server: Endpoint, lastSeen: Double) {
        self.stream = stream
        self.client = client
        self.server = server
        self.lastSeen = lastSeen
    }

    func side(of source: Endpoint) -> FlowSide { source == client ? .clientToServer : .serverToClient }

    subscript(side: FlowSide) -> HalfStream {
        // A plain getter (a copy retains the half-stream's arrays): a `_read` coroutine on a
        // class allocates its frame on every access.
        get { side == .clientToServer ? toServer : toClient }
        _modify {
            if side == .clientToServer { yield &toServer } else { yield &toClient }
        }
    }

    var isFinished: Bool { toServer.finished && toClient.finished }
}
