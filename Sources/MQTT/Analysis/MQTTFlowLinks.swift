import Synchronization

/// What became of each QoS 1 and 2 PUBLISH later in the captures, found by a first pass over
/// them and read by the second (`--two-pass`, as tshark's `-2`), so that a PUBLISH can name its
/// acknowledgement: in one pass a PUBLISH is written before its acknowledgement is seen, and the
/// acknowledgement names the PUBLISH instead.
///
/// One table for the run, shared by every worker's dissectors, by connection, frame and packet
/// identifier of the PUBLISH (a segment may carry several; two with one identifier in one
/// segment share a link): at most `maxLinks` (48 bytes each with the key; with the deliveries'
/// table and the tables' spare room, 18 MB for the bench capture's 100,000 linked PUBLISHes);
/// the PUBLISHes past them are not linked.
public final class MQTTFlowLinks: Sendable {
    /// What the first pass saw of a PUBLISH's flow after it.
    public struct Link: Sendable, Equatable {
        /// The PUBACK or PUBREC (or the acknowledgement that refused it), and the time to it, µs.
        public var ackFrame: Int?
        public var ackLatency: Int?
        /// The PUBCOMP of a QoS 2 flow, and the time to it from the PUBLISH, µs.
        public var completeFrame: Int?
        public var completeLatency: Int?
        /// The acknowledgement carried a failure reason code (5.0).
        public var refused = false
        /// The step that never came before its connection ended (PUBREL, say), when the flow was
        /// left open. (A type, not its name: a note that holds a link stays a plain value, copied
        /// without reference counting, as every flow note is.)
        public var neverSent: MQTTPacketType?
    }

    public static let maxLinks = 1 << 20

    /// A PUBLISH's key: its connection, and its frame and packet identifier in one word.
    struct Key: Hashable {
        var frameAndID: UInt64
        var stream: Int32

        init(stream: Int, frame: Int, packetID: Int) {
            frameAndID = UInt64(truncatingIfNeeded: frame) << 16 | UInt64(truncatingIfNeeded: packetID & 0xFFFF)
            self.stream = Int32(truncatingIfNeeded: stream)
        }
    }

    /// A `Link` as kept: 32 bytes (the struct of optionals is 64: twice the table for 2^20 links).
    struct Stored {
        var ackFrame = 0
        var completeFrame = 0
        var ackLatency = UInt32.max
        var completeLatency = UInt32.max
        var refused = false
        /// The packet type that never came; 0: none.
        var neverSent: UInt8 = 0

        var link: Link {
            Link(ackFrame: ackFrame == 0 ? nil : ackFrame, ackLatency: ackLatency == .max ? nil : Int(ackLatency),
                 completeFrame: completeFrame == 0 ? nil : completeFrame,
                 completeLatency: completeLatency == .max ? nil : Int(completeLatency), refused: refused,
                 neverSent: neverSent == 0 ? nil : MQTTPacketType(rawValue: neverSent))
        }

        init() {}

        init(_ link: Link) {
            ackFrame = link.ackFrame ?? 0
            completeFrame = link.completeFrame ?? 0
            // Microseconds up to 71 minutes; more is kept as the most.
            ackLatency = link.ackLatency.map { UInt32(clamping: $0) } ?? .max
            completeLatency = link.completeLatency.map { UInt32(clamping: $0) } ?? .max
            refused = link.refused
            neverSent = link.neverSent?.rawValue ?? 0
        }
    }

    private let table = Mutex<[Key: Stored]>([:])

    /// The deliveries the broker model matched to a client PUBLISH (first pass): on how many
    /// connections, and the time from the PUBLISH to the first, µs.
    public struct Delivery: Sendable, Equatable {
        public var connections: Int
        public var firstLatency: Int
    }

    /// Deliveries by connection, frame and the PUBLISH's place among the client's PUBLISHes in
    /// that frame (a QoS 0 PUBLISH has no packet identifier): 8 bytes each.
    private let deliveries = Mutex<[Key: (connections: UInt32, firstLatency: UInt32)]>([:])

    public init() {}

    /// The link of the PUBLISH with `packetID` in `frame` of connection `stream`, if the first
    /// pass saw one.
    public func link(stream: Int, frame: Int, packetID: Int) -> Link? {
        table.withLock { $0[Key(stream: stream, frame: frame, packetID: packetID)]?.link }
    }

    /// The deliveries of the client's PUBLISH at `place` among its PUBLISHes in `frame` of
    /// connection `stream`, if the first pass matched any.
    public func delivery(stream: Int, frame: Int, place: Int) -> Delivery? {
        deliveries.withLock { table in
            table[Key(stream: stream, frame: frame, packetID: place)].map { Delivery(connections: Int($0.connections), firstLatency: Int($0.firstLatency)) }
        }
    }

    /// One delivery more of that PUBLISH, `latency` µs after it (the first one's kept).
    func delivered(stream: Int, frame: Int, place: Int, latency: Int) {
        deliveries.withLock { table in
            let key = Key(stream: stream, frame: frame, packetID: place)
            if let d = table[key] {
                table[key] = (d.connections &+ 1, d.firstLatency)
            } else if table.count < Self.maxLinks {
                table[key] = (1, UInt32(clamping: latency))
            }
        }
    }

    /// Changes the link of the PUBLISH with `packetID` in `frame` of connection `stream` (made
    /// empty when new, unless the table is full).
    func update(stream: Int, frame: Int, packetID: Int, _ body: (inout Link) -> Void) {
        table.withLock { links in
            let key = Key(stream: stream, frame: frame, packetID: packetID)
            if links[key] == nil, links.count >= Self.maxLinks { return }
            var link = links[key]?.link ?? Link()
            body(&link)
            links[key] = Stored(link)
        }
    }
}

/// How a connection's flow analysis uses the run's links (`MQTTOptions.flowLinks`).
public enum MQTTFlowLinking: Sendable {
    /// The first pass: what each flow came to is written into the links.
    case collect(MQTTFlowLinks)
    /// The second: each PUBLISH is told what its flow came to.
    case read(MQTTFlowLinks)
}
