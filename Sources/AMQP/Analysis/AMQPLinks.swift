import Synchronization

/// What became of each basic.publish and each delivery later in the captures, found by a first
/// pass and read by the second (`--two-pass`), so that a publish can say where it was routed and
/// which confirm covered it, and a delivery which acknowledgement settled it: in one pass they
/// are written before those are seen (the acknowledgement and the confirm name them instead, and
/// the routes come as records after the PDUs).
///
/// One table for the run, shared by every worker's dissectors, by connection, frame and the
/// method's place among the connection's publishes and deliveries in that frame (a frame may
/// carry several): at most `maxLinks`; those past them are not linked.
public final class AMQPLinks: Sendable {
    /// What the first pass saw of a publish or a delivery after it.
    public struct Link: Sendable, Equatable {
        /// A publish: the queues the broker model routed it to, when it could judge.
        public var queues: [String]?
        /// A publish: the broker's basic.ack or basic.nack that covered it, the time to it (µs),
        /// and whether it was a nack.
        public var confirmFrame: Int?
        public var confirmLatency: Int?
        public var nacked = false
        /// A delivery: the client's basic.ack, nack or reject that settled it, the time to it (µs),
        /// whether it was a nack or reject, and whether it asked for a requeue.
        public var ackFrame: Int?
        public var ackLatency: Int?
        public var rejected = false
        public var requeued = false
    }

    public static let maxLinks = 1 << 20

    struct Key: Hashable {
        var frame: Int
        var stream: Int32
        var place: Int32

        init(stream: Int, frame: Int, place: Int) {
            self.frame = frame
            self.stream = Int32(truncatingIfNeeded: stream)
            self.place = Int32(truncatingIfNeeded: place)
        }
    }

    private let table = Mutex<[Key: Link]>([:])

    public init() {}

    /// The link of the publish or delivery at `place` in `frame` of connection `stream`, if the
    /// first pass saw one.
    public func link(stream: Int, frame: Int, place: Int) -> Link? {
        table.withLock { $0[Key(stream: stream, frame: frame, place: place)] }
    }

    /// Changes that link (made empty when new, unless the table is full).
    func update(stream: Int, frame: Int, place: Int, _ body: (inout Link) -> Void) {
        table.withLock { links in
            let key = Key(stream: stream, frame: frame, place: place)
            if links[key] == nil, links.count >= Self.maxLinks { return }
            var link = links[key] ?? Link()
            body(&link)
            links[key] = link
        }
    }
}

/// How a connection's analysis uses the run's links (`AMQPOptions.links`).
public enum AMQPLinking: Sendable {
    /// The first pass: what became of each publish and delivery is written into the links.
    case collect(AMQPLinks)
    /// The second: each publish and delivery is told.
    case read(AMQPLinks)
}
