import Packets

/// A tracked TCP connection: its number, its sides and both half-streams. A class, so a segment
/// updates its connection where the table holds it, with one lookup and no copy of its buffers.
final class Connection {
    let stream: Int
    let client: Endpoint
    let server: Endpoint
    /// The two half-streams, client to server first, in memory of their own that lives as long
    /// as the connection: `subscript(side:)` hands out their address, so a half-stream is read
    /// and changed in place, with no copy and no count of references (a stored property of a
    /// class has no address that outlives the access; a `_read`/`_modify` accessor was not
    /// inlined and retained what it yielded: docs/performance.md).
    private let halves: UnsafeMutablePointer<HalfStream>
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
        halves = .allocate(capacity: 2)
        halves.initialize(repeating: HalfStream(), count: 2)
    }

    deinit {
        halves.deinitialize(count: 2)
        halves.deallocate()
    }

    func side(of source: Endpoint) -> FlowSide { source == client ? .clientToServer : .serverToClient }

    /// The half-stream of `side`, where it lies. Only the reassembler's thread reaches it, one
    /// access at a time, as every other state of the connection.
    subscript(side: FlowSide) -> HalfStream {
        unsafeAddress { UnsafePointer(halves + (side == .clientToServer ? 0 : 1)) }
        unsafeMutableAddress { halves + (side == .clientToServer ? 0 : 1) }
    }

    var isFinished: Bool { self[.clientToServer].finished && self[.serverToClient].finished }
}
