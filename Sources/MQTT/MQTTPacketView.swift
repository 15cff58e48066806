import Dissection

/// How a connection's packets are shown: what the dissector asks of a view, made in Render
/// (`MQTTViews.MQTTStandardView`) and handed to the dissector (`MQTTConnectionDissector.view`),
/// so this module decodes and keeps state but writes no output of its own (issue #27 item 3).
public protocol MQTTPacketView: Sendable {
    /// The packet's PDU: its field tree and summary line, its problems, and what the analyses say
    /// of it (`notes`) as fields and, unless the detail is `.json`, as words. `lineSink`: a buffer
    /// for summary lines and words, reused from packet to packet (a connection's); without one,
    /// each line gets its own.
    func pdu(of packet: MQTTPacket, notes: MQTTPacketNotes, options: MQTTOptions, lineSink: ByteSink?) -> DissectedPDU
    /// What a table counts of a packet with no problem, with no field tree; nil for a packet that
    /// goes as a box (`countedBox`) or as its tree.
    func counted(_ packet: MQTTPacket) -> CountedPDU?
    /// A counted packet as the box an array of PDUs holds.
    func box(_ counted: borrowing CountedPDU, type: MQTTPacketType) -> DissectedPDU
    /// A packet with no problem that a table counts from a box of its facts (a CONNECT), or
    /// whose box carries its typed packet (SUBSCRIBE, UNSUBSCRIBE); nil for any other.
    func countedBox(_ packet: MQTTPacket) -> DissectedPDU?
    /// The entry for bytes of a direction that were seen but decoded as no packet.
    func skipped(_ count: Int, problems: [Problem]) -> DissectedPDU
}

/// What the connection's analyses say of one packet, for its view.
public struct MQTTPacketNotes: Sendable {
    /// Its step in a QoS 1 or 2 message flow (`MQTTFlows`).
    public var flow: MQTTFlowNote?
    /// What the connection as a whole says of it (`MQTTConnectionWatch`).
    public var watch: MQTTWatchNote?
    /// In the second pass of a run in two, a client PUBLISH's deliveries.
    public var delivery: MQTTFlowLinks.Delivery?

    @inlinable public init(flow: MQTTFlowNote? = nil, watch: MQTTWatchNote? = nil, delivery: MQTTFlowLinks.Delivery? = nil) {
        self.flow = flow
        self.watch = watch
        self.delivery = delivery
    }
}
