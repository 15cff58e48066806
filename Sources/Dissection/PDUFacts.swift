/// How much of a PDU decoders build: the whole field tree (what text and JSON print), or
/// only the facts that summaries count.
public enum PDUDetail: Sendable, Equatable {
    /// The field tree and summary line, as text and JSON show them. The default.
    case tree
    /// `DissectedPDU.facts` and the problems, without the field tree or the summary's detail,
    /// for the PDUs a decoder has a fast path for (the frequent ones: MQTT PUBLISH and its
    /// acknowledgements, AMQP basic.publish/deliver/ack, content headers and bodies). A PDU
    /// whose fast path finds anything unusual is decoded in full instead, so its problems are
    /// the same as in `.tree`. Tables need no more.
    case facts
}

/// What summaries count about one PDU, typed: its kind, MQTT topic and payload, AMQP channel,
/// queue, completed message and close. `init(deriving:)` reads them off a field tree, by the
/// well-known root keys decoders use; a decoder's fast path (`PDUDetail.facts`) sets them
/// directly, without building the tree. Both ways give the same facts for the same bytes.
public struct PDUFacts: Sendable, Equatable {
    /// The packet type or AMQP method (`PUBLISH`, `basic.deliver`), else the frame type (`body`).
    public var kind: String
    /// The topic a PUBLISH went to (an alias resolved).
    public var topic: String?
    public var payloadLength: Int?
    public var qos: Int?
    public var retained = false
    /// A CONNECT's client identifier and protocol version.
    public var clientID: String?
    public var connectVersion: String?
    /// A root `version` (an AMQP protocol header's).
    public var version: String?
    public var channel: Int?
    /// The queue a delivery or a settlement concerns.
    public var queue: String?
    /// Deliveries a `multiple` acknowledgement settled.
    public var ackedCount: Int?
    /// Who the AMQP client is (connection.start-ok, connection.open).
    public var identity: ClientIdentity?
    /// The message this PDU completed (AMQP content assembly).
    public var message: MessageFacts?
    /// A channel.close or connection.close.
    public var close: CloseFacts?

    public init(kind: String) {
        self.kind = kind
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
    /// name), and depth-first only for a CONNECT's client id and version and a close's reply.
    public init(deriving pdu: DissectedPDU) {
        var method, type, frameType: String?
        var identity = ClientIdentity()
        var hasIdentity = false
        var messageIndex: Int?
        self.kind = "?"
        for i in pdu.fields.indices {
            let value = pdu.fields[i].value
            switch pdu.fields[i].key {
            case "method": method = method ?? value.stringValue
            case "type":
                type = type ?? value.stringValue
                // An MQTT fixed header: the PUBLISH flags are its children.
                for c in pdu.fields[i].children {
                    if c.key == "qos" { qos = c.value.intValue } else if c.key == "retain" { retained = c.value == .bool(true) }
                }
            case "frame_type": frameType = frameType ?? value.stringValue
            case "queue": queue = queue ?? value.stringValue
            case "acked_count": ackedCount = ackedCount ?? value.intValue
            case "message": messageIndex = messageIndex ?? i
            case "topic": topic = topic ?? value.stringValue
            case "payload_length": payloadLength = payloadLength ?? value.intValue
            case "sasl_user": identity.saslUser = value.stringValue; hasIdentity = true
            case "vhost": identity.vhost = value.stringValue; hasIdentity = true
            case "client_product": identity.product = value.stringValue; hasIdentity = true
            case "client_version": identity.productVersion = value.stringValue; hasIdentity = true
            case "client_platform": identity.platform = value.stringValue; hasIdentity = true
            case "channel": channel = value.intValue
            case "version": version = version ?? value.stringValue
            default: continue
            }
        }
        kind = method ?? type ?? frameType
            ?? pdu.field("method")?.value.stringValue ?? pdu.field("type")?.value.stringValue
            ?? pdu.field("frame_type")?.value.stringValue ?? "?"
        if hasIdentity { self.identity = identity }
        if kind == "PUBLISH", topic == nil { topic = pdu.field("topic")?.value.stringValue }
        if kind == "CONNECT" {
            clientID = pdu.field("client_id")?.value.stringValue
            connectVersion = pdu.field("version")?.value.stringValue
        }
        if let i = messageIndex {
            let children = pdu.fields[i].children
            func child(_ key: String) -> FieldValue? { children.first { $0.key == key }?.value }
            message = MessageFacts(method: child("method")?.stringValue, exchange: child("exchange")?.stringValue,
                                   routingKey: child("routing_key")?.stringValue, bodySize: child("body_size")?.intValue)
        }
        if kind == "channel.close" || kind == "connection.close" {
            close = CloseFacts(replyCode: pdu.field("reply_code")?.value.intValue,
                               replyCodeName: pdu.field("reply_code_name")?.value.stringValue,
                               replyText: pdu.field("reply_text")?.value.stringValue,
                               failedMethod: pdu.field("failed_method")?.value.stringValue)
        }
    }
}
