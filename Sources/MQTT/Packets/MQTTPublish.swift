import Dissection

/// PUBLISH (MQTT 5.0 §3.3, 3.1.1 §3.3). DUP, QoS and RETAIN are the fixed header's flags.
public struct MQTTPublish: Sendable {
    public var dup: Bool
    public var qos: Int
    public var retain: Bool
    /// The topic name as on the wire (empty in a 5.0 PUBLISH that uses a topic alias alone).
    public var topic: Ranged<String>?
    public var packetID: Ranged<Int>?
    public var properties: MQTTProperties?
    /// The Topic Alias property (MQTT 5.0 §3.3.2.3.4), and what this direction's map made of it.
    public var topicAlias: Ranged<Int>?
    public var alias: AliasUse = .none
    /// Where the payload starts and its full length (held or not); nil when the bytes did not reach it.
    public var payload: Payload?

    public enum AliasUse: Sendable, Equatable {
        case none
        /// A topic name and an alias: the alias now stands for the topic in this direction.
        case set
        /// An empty topic name: the alias's topic in this direction.
        case resolved(String)
        /// An empty topic name and an alias this direction never set.
        case unknown
    }

    public struct Payload: Sendable, Equatable {
        public var start: Int
        /// The full length on the wire.
        public var length: Int
        /// How much of it is held (a packet cut short holds less).
        public var heldCount: Int
    }

    public init(flags: UInt8) {
        dup = flags & 0x08 != 0
        qos = Int((flags >> 1) & 0b11)
        retain = flags & 0x01 != 0
    }

    /// The topic the message is published to: the wire's, or its alias's in this direction.
    public var topicName: String? {
        if case .resolved(let topic) = alias { return topic }
        return topic?.value
    }
}

/// PUBACK, PUBREC, PUBREL, PUBCOMP (MQTT 5.0 §3.4–3.7, 3.1.1 §3.4–3.7).
public struct MQTTPublishResponse: Sendable {
    public var packetID: Ranged<Int>?
    /// 5.0 only; implied Success when the packet ends after the identifier.
    public var reasonCode: MQTTReasonCodeValue?
    public var properties: MQTTProperties?

    public init() {}
}

/// DISCONNECT and AUTH (MQTT 5.0 §3.14, §3.15): an optional reason code and properties (a 3.x
/// DISCONNECT has neither).
public struct MQTTReasonPacket: Sendable {
    public var reasonCode: MQTTReasonCodeValue?
    public var properties: MQTTProperties?

    public init() {}
}
