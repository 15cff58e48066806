/// Where a PDU or note sits in the capture: what renderers print around it.
public struct StreamContext: Sendable {
    /// 1-based number of the capture record that completed the PDU (or caused the note).
    public var frame: Int
    public var time: Timestamp
    /// Connection number, in order of first appearance, from 0.
    public var stream: Int
    /// The sender and the receiver, in one reference.
    public var endpoints: StreamEndpoints

    /// `ip:port` of the sender (IPv6 as `[addr]:port`).
    public var source: String {
        get { endpoints.source }
        set { endpoints = StreamEndpoints(source: newValue, destination: endpoints.destination) }
    }
    public var destination: String {
        get { endpoints.destination }
        set { endpoints = StreamEndpoints(source: endpoints.source, destination: newValue) }
    }

    public init(frame: Int, time: Timestamp, stream: Int, source: String, destination: String) {
        self.init(frame: frame, time: time, stream: stream, endpoints: StreamEndpoints(source: source, destination: destination))
    }

    public init(frame: Int, time: Timestamp, stream: Int, endpoints: StreamEndpoints) {
        self.frame = frame
        self.time = time
        self.stream = stream
        self.endpoints = endpoints
    }
}

/// A context's sender and receiver. One reference: a context (copied into every event, and out
/// of it) is copied with one retain where two strings took two, through the runtime's generic
/// copy; and the pipeline makes each direction's pair once per connection.
public final class StreamEndpoints: Sendable {
    public let source: String
    public let destination: String

    public init(source: String, destination: String) {
        self.source = source
        self.destination = destination
    }

    /// The same endpoints (the same pair, or equal strings).
    public func same(as other: StreamEndpoints) -> Bool {
        self === other || (source == other.source && destination == other.destination)
    }
}

/// A connection the pipeline followed, for summaries.
public struct ConnectionSummary: Sendable {
    public var stream: Int
    public var client: String
    public var server: String
    public var protocolName: String
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var bytesToServer: Int
    public var bytesToClient: Int
    public var closeReason: String
    /// What the connection's message flows came to (MQTT QoS 1 and 2), when its protocol has
    /// an analysis of them and it is on.
    public var flows: FlowStatistics?
    /// How it ended, in the protocol's words (`client DISCONNECT #12`), when an analysis says.
    public var ending: String?

    public init(stream: Int, client: String, server: String, protocolName: String, firstSeen: Timestamp,
                lastSeen: Timestamp, bytesToServer: Int, bytesToClient: Int, closeReason: String) {
        self.stream = stream
        self.client = client
        self.server = server
        self.protocolName = protocolName
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.bytesToServer = bytesToServer
        self.bytesToClient = bytesToClient
        self.closeReason = closeReason
    }
}

/// A decoded PDU with where it was seen; `direction` says whether the client sent it.
///
/// A struct, not the case's tuple of three: one event is made and destroyed per PDU, and a
/// tuple payload was destroyed through the runtime's generic tuple witness (about 200
/// instructions a PDU), a struct's through its own.
public struct PDUEvent: Sendable {
    public var context: StreamContext
    public var direction: Direction
    public var pdu: DissectedPDU

    public init(_ context: StreamContext, _ direction: Direction, _ pdu: DissectedPDU) {
        self.context = context
        self.direction = direction
        self.pdu = pdu
    }
}

/// What the pipeline hands renderers, in capture order.
public enum OutputEvent: Sendable {
    /// A decoded PDU.
    case pdu(PDUEvent)
    /// Frequent PDUs' counted facts, without their boxes, one run of them (only from a
    /// pipeline asked for them: `PipelineOptions.countedPDUs`, for tables). Other renderers
    /// show each as a `pdu` event (`CountedPDUs.pduEvents`). The run is a class: one object
    /// per run, and the events of other cases stay their size.
    case counted(CountedPDUs)
    /// Something that happened to a stream: bytes lost, a retransmission that differs, a limit hit.
    indirect case streamNote(StreamContext, Problem)
    /// Something about the capture itself (a link type that is not supported, a file cut short).
    indirect case captureNote(Problem)
    /// A connection ended (or the capture did).
    indirect case connectionClosed(ConnectionSummary)
    /// A finding of an analysis of a sequence of PDUs (a flow left incomplete), after the PDU
    /// that showed it or when its connection ended.
    indirect case analysis(AnalysisRecord)

    /// A decoded PDU's event.
    public static func pdu(_ context: StreamContext, _ direction: Direction, _ pdu: DissectedPDU) -> OutputEvent {
        .pdu(PDUEvent(context, direction, pdu))
    }
}
