/// One protocol data unit, decoded: an MQTT control packet or an AMQP frame.
public struct DissectedPDU: Sendable {
    /// The protocol's short name, e.g. `mqtt`; also the JSON object key for `fields`.
    public var protocolName: String
    /// One line, e.g. `PUBLISH id=7 QoS 1 sensors/kitchen/temp (4 bytes)`.
    public var summary: String
    /// The field tree, in wire order.
    public var fields: [Field]
    public var problems: [Problem]
    /// Bytes the PDU occupies on the wire (header included), whether or not all were captured.
    public var wireLength: Int
    /// What summaries count, set by a decoder's fast path (`PDUDetail.facts`), which then builds
    /// no field tree. Nil when the tree was built: `PDUFacts(deriving:)` reads them off it.
    public var facts: PDUFacts?

    /// Whether decoders spend work on the summary line's optional detail (an AMQP method's
    /// arguments, a body preview, content properties). Only text and JSON print summaries; a
    /// program that prints tables alone (proto-dissect does) turns this off once, before
    /// decoding, and summaries keep only the PDU's name. Default: on.
    @exclusivity(unchecked) nonisolated(unsafe) public static var buildsSummaries = true

    public init(protocolName: String, summary: String, fields: [Field], problems: [Problem] = [], wireLength: Int,
                facts: PDUFacts? = nil) {
        self.facts = facts
        self.protocolName = protocolName
        self.summary = summary
        self.fields = fields
        self.problems = problems
        self.wireLength = wireLength
    }

    /// The facts summaries count: those the decoder set, else those of the field tree.
    public var summaryFacts: PDUFacts { facts ?? PDUFacts(deriving: self) }

    /// The first field with this key anywhere in the tree.
    public func field(_ key: String) -> Field? {
        for field in fields {
            if let found = field.find(key) { return found }
        }
        return nil
    }
}
