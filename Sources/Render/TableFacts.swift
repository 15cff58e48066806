import Dissection

/// What the table's counting reads of a PDU's facts: a box's `PDUFacts`, or a frequent PDU's
/// `CountedPDU` (which has none of the rare facts). The counting code is generic over it, and
/// specialized for each: one set of rules, no box made for a counted PDU.
protocol TableFacts {
    var kind: String { get }
    var topic: String? { get }
    var payloadLength: Int? { get }
    var qos: Int? { get }
    var retained: Bool { get }
    var clientID: String? { get }
    var connectVersion: String? { get }
    var version: String? { get }
    var channel: Int? { get }
    var queue: String? { get }
    var ackedCount: Int? { get }
    /// Whether any of `identity`, `message` and `close` is set.
    var hasIdentityMessageOrClose: Bool { get }
    var identity: PDUFacts.ClientIdentity? { get }
    var message: PDUFacts.MessageFacts? { get }
    var close: PDUFacts.CloseFacts? { get }
}

extension PDUFacts: TableFacts {}

extension CountedPDU: TableFacts {
    // A counted PDU has none of these (a fast path takes no PDU that would).
    @inline(__always) var clientID: String? { nil }
    @inline(__always) var connectVersion: String? { nil }
    @inline(__always) var version: String? { nil }
    @inline(__always) var hasIdentityMessageOrClose: Bool { false }
    @inline(__always) var identity: PDUFacts.ClientIdentity? { nil }
    @inline(__always) var message: PDUFacts.MessageFacts? { nil }
    @inline(__always) var close: PDUFacts.CloseFacts? { nil }
}
