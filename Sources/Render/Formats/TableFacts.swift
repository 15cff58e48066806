import Dissection

/// What the table's counting reads of a PDU's facts: a box's `PDUFacts`, or a frequent PDU's
/// `CountedPDU` where it lies (`CountedPDURef`; of the rare facts it has only a completed message). The counting
/// code is generic over it, and specialized for each: one set of rules, no box made for a
/// counted PDU.
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

/// A counted PDU read where it lies in its run (`OutputEvent.counted`): passing the value itself
/// to the counting copied it, and destroyed the copy, through the runtime's value witnesses
/// (about 110 instructions a PDU); a pointer is copied as a word.
struct CountedPDURef: TableFacts {
    let pdu: UnsafePointer<CountedPDU>

    @inline(__always) var kind: String { pdu.pointee.kind }
    @inline(__always) var topic: String? { pdu.pointee.topic }
    @inline(__always) var payloadLength: Int? { pdu.pointee.payloadLength }
    @inline(__always) var qos: Int? { pdu.pointee.qos }
    @inline(__always) var retained: Bool { pdu.pointee.retained }
    @inline(__always) var channel: Int? { pdu.pointee.channel }
    @inline(__always) var queue: String? { pdu.pointee.queue }
    @inline(__always) var ackedCount: Int? { pdu.pointee.ackedCount }
    @inline(__always) var clientID: String? { nil }
    @inline(__always) var connectVersion: String? { nil }
    @inline(__always) var version: String? { nil }
    @inline(__always) var hasIdentityMessageOrClose: Bool { pdu.pointee.hasMessage }
    @inline(__always) var identity: PDUFacts.ClientIdentity? { nil }
    @inline(__always) var message: PDUFacts.MessageFacts? { pdu.pointee.message }
    @inline(__always) var close: PDUFacts.CloseFacts? { nil }
}

extension CountedPDUs {
    /// Calls `body` with each PDU of the run, read where it lies (`CountedPDURef`), in order.
    @inline(__always)
    func forEachInPlace(_ body: (CountedPDURef) -> Void) {
        pdus.withUnsafeBufferPointer { pdus in
            for i in pdus.indices { body(CountedPDURef(pdu: pdus.baseAddress! + i)) }
        }
    }
}
