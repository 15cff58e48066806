import Dissection

/// Settings of the MQTT dissector. Every limit is a setting; defaults are documented here.
public struct MQTTOptions: Sendable {
    /// The version to decode with when a connection's CONNECT is not in the capture
    /// (`--mqtt-version`). Nil: guess from the packets (see `MQTTConnectionDissector`).
    public var assumedVersion: MQTTVersion?
    /// Bytes of a PUBLISH payload (or will payload) shown in the field tree. Default 256.
    public var payloadPreviewBytes: Int
    /// The framer holds at most this many bytes of one PDU (header included); the rest is
    /// counted and skipped. A PUBLISH is still decoded from its prefix. Default 1 MiB.
    public var maxHeldPDUBytes: Int
    /// When looking for a packet boundary (mid-stream start, after a lost gap), a candidate
    /// packet must end, and the next header begin, within this many bytes. Default 64 KiB.
    public var resyncWindowBytes: Int
    /// How much of each PDU to build: the field tree (default), or for the frequent packets
    /// (PUBLISH and its acknowledgements, PINGREQ/PINGRESP) only the facts summaries count, or
    /// only the text tree and summary.
    public var detail: PDUDetail = .tree
    /// Whether field trees carry their text lines (the bit-by-bit lines the text format prints):
    /// a program that prints JSON or tables alone skips making them. Default: on.
    public var textLines = true
    /// Whether each connection's QoS 1 and 2 message flows are followed (`MQTTFlows`): the PDUs'
    /// `flow` notes, the analysis records, the connection's flow statistics. On by default.
    public var analysis = true
    /// QoS 1 and 2 flows followed in flight per direction of a connection, at most (each costs
    /// about 100 bytes): past it a direction's new flows are not followed (an analysis record
    /// says so once).
    public var maxFlowsInFlight = MQTTOptions.defaultMaxFlowsInFlight
    public static let defaultMaxFlowsInFlight = 4096
    /// A run in two passes (`--two-pass`): the first writes what each flow came to into these
    /// links, the second reads them, so that each PUBLISH names its acknowledgement. Nil: one
    /// pass (the acknowledgement names the PUBLISH).
    public var flowLinks: MQTTFlowLinking?
    public init(assumedVersion: MQTTVersion? = nil, payloadPreviewBytes: Int = 256,
                maxHeldPDUBytes: Int = 1 << 20, resyncWindowBytes: Int = 1 << 16) {
        self.assumedVersion = assumedVersion
        self.payloadPreviewBytes = payloadPreviewBytes
        self.maxHeldPDUBytes = maxHeldPDUBytes
        self.resyncWindowBytes = resyncWindowBytes
    }
}
