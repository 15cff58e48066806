/// How much of a PDU decoders build: the whole field tree (what text and JSON print), or
/// only the facts that summaries count.
public enum PDUDetail: Sendable, Equatable {
    /// The field tree and summary line, as text and JSON show them. The default.
    case tree
    /// What a table counts: a PDU with no problem as a `CountedPDU` (into a `PDUBatch`) or a box
    /// of its `DissectedPDU.facts`, without the field tree or the summary's detail; any other
    /// as its field tree, so the problems are the same as in `.tree`. Tables need no more.
    case facts
    /// The tree, for the text format.
    case text
    /// The tree, for the JSON format: the analysis's words for the text line
    /// (`DissectedPDU.annotations`) are left out, as JSON prints its values instead, and an
    /// AMQP content header's `properties` (and the message's repeat of them) is the object
    /// written once, a `FieldValue.json` without children. Text lines come with
    /// `AMQPOptions.textLines` / `MQTTOptions.textLines`, which the command turns off for JSON.
    case json
}

/// What summaries count about one PDU, typed: its kind, MQTT topic and payload, AMQP channel,
/// queue, completed message and close. `init(deriving:)` reads them off a field tree, by the
/// well-known root keys decoders use; a decoder's facts view (`PDUDetail.facts`) sets them
/// directly, without building the tree. Both ways give the same facts for the same bytes.
public struct PDUFacts: Sendable, Equatable {
    /// The values live in one shared, copy-on-write box: a PDU's facts are copied with it
    /// (into events, out of arrays), and one reference is cheaper to copy than a dozen strings.
    /// Usable from inline code: the getters are inlined into the table's code (another module),
    /// where most of their cost was the call.
    // Unchecked: written only while uniquely referenced (copy on write), so never while shared.
    @usableFromInline final class Storage: @unchecked Sendable {
        // Written only while uniquely referenced (copy on write): no runtime exclusivity checks.
        @usableFromInline @exclusivity(unchecked) var values: Values
        init(_ values: Values) { self.values = values }
    }

    /// A member added here is cleared in `reset(kind:)` too.
    @usableFromInline struct Values: Equatable {
        @usableFromInline var kind: String
        @usableFromInline var topic: String?
        @usableFromInline var payloadLength: Int?
        @usableFromInline var qos: Int?
        @usableFromInline var retained = false
        @usableFromInline var clientID: String?
        @usableFromInline var connectVersion: String?
        @usableFromInline var version: String?
        @usableFromInline var channel: Int?
        @usableFromInline var queue: String?
        @usableFromInline var ackedCount: Int?
        var identity: ClientIdentity?
        var message: MessageFacts?
        var close: CloseFacts?
        /// Which of `identity`, `message` and `close` are set: most PDUs have none, and asking
        /// for a nil struct of strings through the box costs about a hundred instructions, the
        /// bit a few (tables ask for all three per PDU).
        @usableFromInline var extras: UInt8 = 0

        static let identityBit: UInt8 = 1, messageBit: UInt8 = 2, closeBit: UInt8 = 4
    }

    @usableFromInline var storage: Storage

    public static func == (a: PDUFacts, b: PDUFacts) -> Bool {
        a.storage === b.storage || a.storage.values == b.storage.values
    }

    /// The box, made this value's own first (copy on write).
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.values) }
        return storage
    }

    private mutating func update(_ change: (inout Values) -> Void) {
        change(&uniqueStorage().values)
    }

    /// Stores one of `identity`, `message` and `close` in `s` and sets or clears its bit in
    /// `extras`. Each of the three has its own setter calling this, not one generic over a key
    /// path: that went through the runtime's generic value witnesses, copying and destroying the
    /// struct of strings member by member.
    @inline(__always)
    private static func markExtra(_ bit: UInt8, present: Bool, in s: Storage) {
        if present { s.values.extras |= bit } else { s.values.extras &= ~bit }
    }

    /// The packet type or AMQP method (`PUBLISH`, `basic.deliver`), else the frame type (`body`).
    public var kind: String {
        @inlinable get { storage.values.kind }
        set { update { $0.kind = newValue } }
    }
    /// The topic a PUBLISH went to (an alias resolved).
    public var topic: String? {
        @inlinable get { storage.values.topic }
        set { update { $0.topic = newValue } }
    }
    public var payloadLength: Int? {
        @inlinable get { storage.values.payloadLength }
        set { update { $0.payloadLength = newValue } }
    }
    public var qos: Int? {
        @inlinable get { storage.values.qos }
        set { update { $0.qos = newValue } }
    }
    public var retained: Bool {
        @inlinable get { storage.values.retained }
        set { update { $0.retained = newValue } }
    }
    /// A CONNECT's client identifier.
    public var clientID: String? {
        @inlinable get { storage.values.clientID }
        set { update { $0.clientID = newValue } }
    }
    /// A CONNECT's protocol version.
    public var connectVersion: String? {
        @inlinable get { storage.values.connectVersion }
        set { update { $0.connectVersion = newValue } }
    }
    /// A root `version` (an AMQP protocol header's).
    public var version: String? {
        @inlinable get { storage.values.version }
        set { update { $0.version = newValue } }
    }
    public var channel: Int? {
        @inlinable get { storage.values.channel }
        set { update { $0.channel = newValue } }
    }
    /// The queue a delivery or a settlement concerns.
    public var queue: String? {
        @inlinable get { storage.values.queue }
        set { update { $0.queue = newValue } }
    }
    /// Deliveries a `multiple` acknowledgement settled.
    public var ackedCount: Int? {
        @inlinable get { storage.values.ackedCount }
        set { update { $0.ackedCount = newValue } }
    }
    /// Whether any of `identity`, `message` and `close` is set (few PDUs have one): asking this
    /// first spares a reader the three lookups.
    @inlinable public var hasIdentityMessageOrClose: Bool { storage.values.extras != 0 }

    /// Who the AMQP client is (connection.start-ok, connection.open).
    public var identity: ClientIdentity? {
        get { storage.values.extras & Values.identityBit == 0 ? nil : storage.values.identity }
        set {
            let s = uniqueStorage()
            Self.markExtra(Values.identityBit, present: newValue != nil, in: s)
            s.values.identity = newValue
        }
    }
    /// The message this PDU completed (AMQP content assembly).
    public var message: MessageFacts? {
        get { storage.values.extras & Values.messageBit == 0 ? nil : storage.values.message }
        set {
            let s = uniqueStorage()
            Self.markExtra(Values.messageBit, present: newValue != nil, in: s)
            s.values.message = newValue
        }
    }
    /// A channel.close or connection.close.
    public var close: CloseFacts? {
        get { storage.values.extras & Values.closeBit == 0 ? nil : storage.values.close }
        set {
            let s = uniqueStorage()
            Self.markExtra(Values.closeBit, present: newValue != nil, in: s)
            s.values.close = newValue
        }
    }

    public init(kind: String) {
        storage = Storage(Values(kind: kind))
    }

    /// Makes these facts those of `PDUFacts(kind: kind)`, in their own box when nothing else
    /// holds it (a box from the PDU pool keeps its facts' box: no allocation per PDU).
    public mutating func reset(kind: String) {
        if isKnownUniquelyReferenced(&storage) {
            // Member by member, only those set: assigning a whole new `Values` copies and
            // destroys every member through the runtime.
            let s = storage
            s.values.kind = kind
            if s.values.topic != nil { s.values.topic = nil }
            if s.values.payloadLength != nil { s.values.payloadLength = nil }
            if s.values.qos != nil { s.values.qos = nil }
            if s.values.retained { s.values.retained = false }
            if s.values.clientID != nil { s.values.clientID = nil }
            if s.values.connectVersion != nil { s.values.connectVersion = nil }
            if s.values.version != nil { s.values.version = nil }
            if s.values.channel != nil { s.values.channel = nil }
            if s.values.queue != nil { s.values.queue = nil }
            if s.values.ackedCount != nil { s.values.ackedCount = nil }
            // Only those set: each optional struct of strings is destroyed through the runtime's
            // generic value witnesses (about 150 instructions), set or not.
            let extras = s.values.extras
            if extras != 0 {
                if extras & Values.identityBit != 0 { s.values.identity = nil }
                if extras & Values.messageBit != 0 { s.values.message = nil }
                if extras & Values.closeBit != 0 { s.values.close = nil }
                s.values.extras = 0
            }
        } else {
            storage = Storage(Values(kind: kind))
        }
    }

    /// Sets a PUBLISH's facts in one write: its topic, payload length, QoS and retain flag.
    public mutating func setPublish(topic: String, payloadLength: Int, qos: Int, retained: Bool) {
        update {
            $0.topic = topic
            $0.payloadLength = payloadLength
            $0.qos = qos
            $0.retained = retained
        }
    }

    public struct ClientIdentity: Sendable, Equatable {
        public var saslUser, vhost, product, productVersion, platform: String?
        public init() {}
    }

    public struct MessageFacts: Sendable, Equatable {
        public var method: String?
        public var exchange: String?
        public var routingKey: String?
        public var bodySize: Int?
        public init(method: String?, exchange: String?, routingKey: String?, bodySize: Int?) {
            self.method = method
            self.exchange = exchange
            self.routingKey = routingKey
            self.bodySize = bodySize
        }
    }

    public struct CloseFacts: Sendable, Equatable {
        public var replyCode: Int?
        public var replyCodeName: String?
        public var replyText: String?
        public var failedMethod: String?
        public init(replyCode: Int?, replyCodeName: String?, replyText: String?, failedMethod: String?) {
            self.replyCode = replyCode
            self.replyCodeName = replyCodeName
            self.replyText = replyText
            self.failedMethod = failedMethod
        }
    }

    /// The facts of a decoded field tree, in one pass over its root fields (derived keys live at
    /// the root; a depth-first search could find an argument or message property of the same
    /// name). The root keys read: `method`, `type` (an MQTT fixed header, whose children give
    /// `qos` and `retain`), `frame_type`, `topic`, `payload_length`, `channel`, `version`, `queue`,
    /// `acked_count`, `message` (its `method`, `exchange`, `routing_key`, `body_size`) and
    /// `sasl_user`, `vhost`, `client_product`, `client_version`, `client_platform`. Depth-first
    /// only where no root key is found: the kind (`method`, `type`, `frame_type`), a PUBLISH's
    /// `topic`, a CONNECT's `client_id` and `version`, and a close's `reply_code`, `reason`
    /// (the reply code's name), `reply_text` and `failed_method`.
    public init(deriving pdu: DissectedPDU) {
        var method, type, frameType: String?
        var identity = ClientIdentity()
        var hasIdentity = false
        var messageIndex: Int?
        var topic: String?, payloadLength: Int?, qos: Int?, retained = false
        var queue: String?, ackedCount: Int?, channel: Int?, version: String?
        for i in pdu.fields.indices {
            let value = pdu.fields[i].value
            // By UTF-8 length first: a switch on the key alone compared it with each case in turn
            // (about 80 instructions a comparison, a few thousand a PDU), and most root keys match
            // none. Exact: a string equal to one of these ASCII keys has its length (no character
            // outside ASCII is canonically equivalent to a lowercase letter or `_`).
            switch (pdu.fields[i].key.utf8.count, pdu.fields[i].key) {
            case (6, "method"): method = method ?? value.stringValue
            case (4, "type"):
                type = type ?? value.stringValue
                // An MQTT fixed header: the PUBLISH flags are its children.
                for c in pdu.fields[i].children {
                    if c.key == "qos" { qos = c.value.intValue } else if c.key == "retain" { retained = c.value == .bool(true) }
                }
            case (10, "frame_type"): frameType = frameType ?? value.stringValue
            case (5, "queue"): queue = queue ?? value.stringValue
            case (11, "acked_count"): ackedCount = ackedCount ?? value.intValue
            case (7, "message"): messageIndex = messageIndex ?? i
            case (5, "topic"): topic = topic ?? value.stringValue
            case (14, "payload_length"): payloadLength = payloadLength ?? value.intValue
            case (9, "sasl_user"): identity.saslUser = value.stringValue; hasIdentity = true
            case (5, "vhost"): identity.vhost = value.stringValue; hasIdentity = true
            case (14, "client_product"): identity.product = value.stringValue; hasIdentity = true
            case (14, "client_version"): identity.productVersion = value.stringValue; hasIdentity = true
            case (15, "client_platform"): identity.platform = value.stringValue; hasIdentity = true
            case (7, "channel"): channel = value.intValue
            case (7, "version"): version = version ?? value.stringValue
            default: continue
            }
        }
        let kind = method ?? type ?? frameType
            ?? pdu.field("method")?.value.stringValue ?? pdu.field("type")?.value.stringValue
            ?? pdu.field("frame_type")?.value.stringValue ?? "?"
        var values = Values(kind: kind, topic: topic, payloadLength: payloadLength, qos: qos, retained: retained,
                            version: version, channel: channel, queue: queue, ackedCount: ackedCount)
        if kind == "PUBLISH", topic == nil { values.topic = pdu.field("topic")?.value.stringValue }
        if kind == "CONNECT" {
            values.clientID = pdu.field("client_id")?.value.stringValue
            values.connectVersion = pdu.field("version")?.value.stringValue
        }
        storage = Storage(values)
        if hasIdentity { self.identity = identity }
        if let i = messageIndex {
            let children = pdu.fields[i].children
            func child(_ key: String) -> FieldValue? { children.first { $0.key == key }?.value }
            message = MessageFacts(method: child("method")?.stringValue, exchange: child("exchange")?.stringValue,
                                   routingKey: child("routing_key")?.stringValue, bodySize: child("body_size")?.intValue)
        }
        if kind == "channel.close" || kind == "connection.close" {
            close = CloseFacts(replyCode: pdu.field("reply_code")?.value.intValue,
                               replyCodeName: pdu.field("reason")?.value.stringValue,
                               replyText: pdu.field("reply_text")?.value.stringValue,
                               failedMethod: pdu.field("failed_method")?.value.stringValue)
        }
    }
}
