import Packets

/// A tracked TCP connection: its number, its sides and both half-streams.
struct Connection {
    let stream: Int
    let client: Endpoint
    let server: Endpoint
    var toServer = HalfStream()
    var toClient = HalfStream()
    var lastSeen: Double
    var reset = false

    init(stream: Int, client: Endpoint, server: Endpoint, lastSeen: Double) {
        self.stream = stream
        self.client = client
        self.server = server
        self.lastSeen = lastSeen
    }

    func side(of source: Endpoint) -> FlowSide { source == client ? .clientToServer : .serverToClient }

    subscript(side: FlowSide) -> HalfStream {
        get { side == .clientToServer ? toServer : toClient }
        _modify {
            if side == .clientToServer { yield &toServer } else { yield &toClient }
        }
    }

    var isFinished: Bool { toServer.finished && toClient.finished }
}
