/// What a table counts of one frequent PDU, made by a decoder's facts view
/// (`PDUDetail.facts`) as a plain value: no `DissectedPDU` box, no `PDUFacts` box, no summary.
/// A dissector hands these out only into a `PDUBatch` (a pipeline asks for them when its events
/// feed a table: `OutputEvent.counted`); into an array of `DissectedPDU` the same PDU comes as
/// the box it always was, with these facts.
///
/// It holds what `PDUFacts` would for such a PDU and nothing else: the facts views take no PDU
/// with a client id, a version, an identity or a close, and none with a problem (those are
/// decoded in full). Small on purpose: it is appended to an array per PDU, so the optional
/// numbers are stored as numbers with -1 for none, and an AMQP message completed by the PDU (one
/// frame in three, at most) is kept in a box of its own.
public struct CountedPDU: Sendable, Equatable {
    /// The packet type or AMQP method (`PDUFacts.kind`).
    public var kind: String
    /// A PUBLISH's topic or an AMQP frame's queue: one String stored for both (`isQueue` says
    /// which), as each PDU has at most one, and every String stored is retained per copy.
    @usableFromInline var name: String?
    @usableFromInline var isQueue = false
    /// Bytes the PDU occupies on the wire (`DissectedPDU.wireLength`).
    public var wireLength: Int
    @usableFromInline var storedPayloadLength = -1
    @usableFromInline var storedAckedCount = -1
    @usableFromInline var storedChannel: Int32 = -1
    @usableFromInline var storedQoS: Int8 = -1
    /// A PUBLISH's retain flag (`PDUFacts.retained`).
    public var retained = false
    /// The AMQP message the PDU completed, boxed (`message`).
    @usableFromInline var messageBox: MessageBox?

    /// A completed message's facts, in a box: one reference in every counted PDU, nil in most.
    /// Equal by its facts.
    @usableFromInline final class MessageBox: Sendable, Equatable {
        @usableFromInline let facts: PDUFacts.MessageFacts
        @usableFromInline init(_ facts: PDUFacts.MessageFacts) { self.facts = facts }
        @usableFromInline static func == (a: MessageBox, b: MessageBox) -> Bool { a.facts == b.facts }
    }

    public init(kind: String, wireLength: Int) {
        self.kind = kind
        self.wireLength = wireLength
    }

    /// A PUBLISH's topic (`PDUFacts.topic`).
    @inlinable public var topic: String? {
        get { isQueue ? nil : name }
        set {
            if newValue == nil, isQueue { return }
            name = newValue
            isQueue = false
        }
    }
    /// The queue a delivery or settlement concerns (`PDUFacts.queue`).
    @inlinable public var queue: String? {
        get { isQueue ? name : nil }
        set {
            if newValue == nil, !isQueue { return }
            name = newValue
            isQueue = newValue != nil
        }
    }
    /// A PUBLISH's payload length (`PDUFacts.payloadLength`).
    @inlinable public var payloadLength: Int? {
        get { storedPayloadLength < 0 ? nil : storedPayloadLength }
        set { storedPayloadLength = newValue.map { max($0, 0) } ?? -1 }
    }
    /// A PUBLISH's QoS (`PDUFacts.qos`; 0 to 2).
    @inlinable public var qos: Int? {
        get { storedQoS < 0 ? nil : Int(storedQoS) }
        set { storedQoS = newValue.map { Int8(clamping: max($0, 0)) } ?? -1 }
    }
    /// An AMQP frame's channel (`PDUFacts.channel`; 0 to 65535).
    @inlinable public var channel: Int? {
        get { storedChannel < 0 ? nil : Int(storedChannel) }
        set { storedChannel = newValue.map { Int32(clamping: max($0, 0)) } ?? -1 }
    }
    /// The deliveries a `multiple` acknowledgement settled (`PDUFacts.ackedCount`).
    @inlinable public var ackedCount: Int? {
        get { storedAckedCount < 0 ? nil : storedAckedCount }
        set { storedAckedCount = newValue.map { max($0, 0) } ?? -1 }
    }

    /// The AMQP message the PDU completed (`PDUFacts.message`).
    @inlinable public var message: PDUFacts.MessageFacts? {
        get { messageBox?.facts }
        set { messageBox = newValue.map(MessageBox.init) }
    }

    /// Whether the PDU completed an AMQP message (`message` is set).
    @inlinable public var hasMessage: Bool { messageBox != nil }

    /// The facts a `DissectedPDU` of this PDU holds.
    public var facts: PDUFacts {
        var facts = PDUFacts(kind: kind)
        if let topic { facts.topic = topic }
        if let payloadLength { facts.payloadLength = payloadLength }
        if let qos { facts.qos = qos }
        if retained { facts.retained = true }
        if let channel { facts.channel = channel }
        if let queue { facts.queue = queue }
        if let ackedCount { facts.ackedCount = ackedCount }
        if let message { facts.message = message }
        return facts
    }

    /// The same PDU as a box: these facts, the summary its kind.
    public func dissected(protocolName: String) -> DissectedPDU {
        var box = DissectedPDU(protocolName: protocolName, summary: kind, fields: [], wireLength: wireLength)
        box.facts = facts
        return box
    }
}

/// Where a dissector puts the PDUs it makes: an array of `DissectedPDU` (every PDU a box), or a
/// `PDUBatch` (the frequent ones as `CountedPDU` values, for a table). Dissecting code generic
/// over it is specialized for each.
public protocol PDUOutput {
    /// PDUs put here so far.
    var count: Int { get }
    mutating func append(_ pdu: DissectedPDU)
    /// A PDU a facts view read: kept as `counted`, or as the box `make` makes of it (which
    /// must hold the same facts and wire length).
    mutating func append(counted: consuming CountedPDU, orBox make: (borrowing CountedPDU) -> DissectedPDU)
}

extension Array: PDUOutput where Element == DissectedPDU {
    @inlinable @inline(__always)
    public mutating func append(counted: consuming CountedPDU, orBox make: (borrowing CountedPDU) -> DissectedPDU) {
        append(make(counted))
    }
}

/// A dissector's PDUs in order: the frequent ones as values (`counted`), the others as boxes
/// (`full`), `full[k]` coming after the first `boxPlaces[k]` of `counted`. Emptied and reused
/// per segment.
public struct PDUBatch: PDUOutput {
    public private(set) var counted: [CountedPDU] = []
    public private(set) var full: [DissectedPDU] = []
    /// For each box of `full`, how many counted PDUs come before it.
    public private(set) var boxPlaces: [Int] = []
    /// The protocol's short name for `counted` (`DissectedPDU.protocolName`), set by the dissector.
    public var protocolName = ""

    public init() {}

    @inlinable public var count: Int { counted.count + full.count }

    public mutating func append(_ pdu: DissectedPDU) {
        full.append(pdu)
        boxPlaces.append(counted.count)
    }

    @inline(__always)
    public mutating func append(counted pdu: consuming CountedPDU, orBox make: (borrowing CountedPDU) -> DissectedPDU) {
        counted.append(pdu)
    }

    /// Empties the batch, keeping its capacity; the boxes nothing else holds go back to this
    /// thread's pool (`DissectedPDU.recycle`).
    public mutating func removeAll() {
        if !counted.isEmpty { counted.removeAll(keepingCapacity: true) }
        if !full.isEmpty {
            boxPlaces.removeAll(keepingCapacity: true)
            DissectedPDU.recycle(&full)
        }
    }

    /// Calls `body` with `full`, for a dissector without a counted path of its own (the default
    /// `StreamDissector.receive(_:from:into:limit:)` for a batch): the boxes it adds are placed
    /// after the counted PDUs there are now.
    public mutating func appendingBoxes<R>(_ body: (inout [DissectedPDU]) -> R) -> R {
        let from = full.count
        let result = body(&full)
        for _ in from..<full.count { boxPlaces.append(counted.count) }
        return result
    }
}

/// Counted PDUs of one connection and direction that came one after the other, all completed
/// by one packet (`OutputEvent.counted`): one event for the run, not one per PDU.
///
/// A class, not a struct behind an indirect case: taken out of its event, a struct was copied
/// member by member (about 110 instructions a run), a reference is retained.
public final class CountedPDUs: Sendable {
    public let context: StreamContext
    public let direction: Direction
    /// The protocol's short name, e.g. `mqtt` (`DissectedPDU.protocolName`).
    public let protocolName: String
    public let pdus: ArraySlice<CountedPDU>

    public init(_ context: StreamContext, _ direction: Direction, protocolName: String, _ pdus: ArraySlice<CountedPDU>) {
        self.context = context
        self.direction = direction
        self.protocolName = protocolName
        self.pdus = pdus
    }

    /// Each PDU as the `PDUEvent` of its box (`CountedPDU.dissected`), in order.
    public var pduEvents: [PDUEvent] {
        pdus.map { PDUEvent(context, direction, $0.dissected(protocolName: protocolName)) }
    }
}
