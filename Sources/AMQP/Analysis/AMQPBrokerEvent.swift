import Dissection

/// What a frame says about the broker's topology and routing, for the broker model that spans
/// connections (`AMQPBroker`): an exchange, queue or binding made or removed, a message published
/// (with what routes it), returned or delivered. Made by the connection dissector from the typed
/// method (and, for a publish, its message) and carried on the frame's PDU (`DissectedPDU.packet`;
/// with the tree detail, on its `AMQPFrame`).
public struct AMQPBrokerEvent: TypedPacket {
    public enum Kind: Sendable {
        /// exchange.declare (not passive).
        case exchangeDeclared(name: String, type: String, durable: Bool, autoDelete: Bool, isInternal: Bool, alternate: String?)
        case exchangeDeleted(name: String)
        /// queue.declare-ok: the queue's name (a server-named one too).
        case queueDeclared(name: String)
        case queueDeleted(name: String)
        /// queue.bind or exchange.bind: from exchange `source` to a queue or an exchange.
        case bound(Binding)
        case unbound(Binding)
        /// basic.publish, at the frame that completed its message: `frame` is the method's.
        case published(Publish)
        /// basic.return: the broker handed a mandatory or immediate message back.
        case returned(replyCode: Int, exchange: String, routingKey: String)
        /// basic.deliver or basic.get-ok from a queue the connection's state attributed it to.
        case delivered(queue: String, exchange: String, routingKey: String)
        /// queue.declare or exchange.declare (not passive), as asked: `entity` is `queue` or
        /// `exchange`, `settings` its properties in words (`durable=true exclusive=false`).
        case declareRequested(entity: String, name: String, settings: String)
        /// A channel.close 406 PRECONDITION_FAILED answering the declare at `requestFrame`.
        case declareRefused(entity: String, name: String, requestFrame: Int, replyText: String)
    }

    public struct Binding: Sendable, Equatable {
        public var source: String
        public var destination: String
        /// Whether the destination is an exchange (exchange.bind) rather than a queue.
        public var toExchange: Bool
        public var routingKey: String
        /// The binding's arguments (a headers exchange's `x-match` and values).
        public var arguments: AMQPFieldTable?
    }

    public struct Publish: Sendable {
        public var exchange: String
        public var routingKey: String
        public var mandatory: Bool
        /// The message's `headers` property, for headers exchanges.
        public var headers: AMQPFieldTable?
        /// The frame of the basic.publish, and its place among the connection's publishes and
        /// deliveries in that frame (`AMQPLinks`).
        public var frame: Int
        public var place = 0
    }

    public var kind: Kind
    public var channel: UInt16

    public init(kind: Kind, channel: UInt16) {
        self.kind = kind
        self.channel = channel
    }

    /// None: the event is a reading of the frame, not its bytes.
    public var bytes: ArraySlice<UInt8> { [] }
    public var wireLength: Int { 0 }
}
