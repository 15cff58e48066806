import Dissection

/// An MQTT 5.0 property identifier (MQTT 5.0 §2.2.2.2). Open: unknown identifiers are kept.
public struct MQTTPropertyID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let payloadFormatIndicator = MQTTPropertyID(rawValue: 0x01)
    public static let messageExpiryInterval = MQTTPropertyID(rawValue: 0x02)
    public static let contentType = MQTTPropertyID(rawValue: 0x03)
    public static let responseTopic = MQTTPropertyID(rawValue: 0x08)
    public static let correlationData = MQTTPropertyID(rawValue: 0x09)
    public static let subscriptionIdentifier = MQTTPropertyID(rawValue: 0x0B)
    public static let sessionExpiryInterval = MQTTPropertyID(rawValue: 0x11)
    public static let assignedClientIdentifier = MQTTPropertyID(rawValue: 0x12)
    public static let serverKeepAlive = MQTTPropertyID(rawValue: 0x13)
    public static let authenticationMethod = MQTTPropertyID(rawValue: 0x15)
    public static let authenticationData = MQTTPropertyID(rawValue: 0x16)
    public static let requestProblemInformation = MQTTPropertyID(rawValue: 0x17)
    public static let willDelayInterval = MQTTPropertyID(rawValue: 0x18)
    public static let requestResponseInformation = MQTTPropertyID(rawValue: 0x19)
    public static let responseInformation = MQTTPropertyID(rawValue: 0x1A)
    public static let serverReference = MQTTPropertyID(rawValue: 0x1C)
    public static let reasonString = MQTTPropertyID(rawValue: 0x1F)
    public static let receiveMaximum = MQTTPropertyID(rawValue: 0x21)
    public static let topicAliasMaximum = MQTTPropertyID(rawValue: 0x22)
    public static let topicAlias = MQTTPropertyID(rawValue: 0x23)
    public static let maximumQoS = MQTTPropertyID(rawValue: 0x24)
    public static let retainAvailable = MQTTPropertyID(rawValue: 0x25)
    public static let userProperty = MQTTPropertyID(rawValue: 0x26)
    public static let maximumPacketSize = MQTTPropertyID(rawValue: 0x27)
    public static let wildcardSubscriptionAvailable = MQTTPropertyID(rawValue: 0x28)
    public static let subscriptionIdentifierAvailable = MQTTPropertyID(rawValue: 0x29)
    public static let sharedSubscriptionAvailable = MQTTPropertyID(rawValue: 0x2A)

    /// How a property's value is encoded (MQTT 5.0 §1.5).
    public enum ValueType: Sendable {
        case byte, twoByteInteger, fourByteInteger, variableByteInteger, utf8String, binaryData, utf8StringPair
    }

    /// Where a property may appear: a packet type, or the will properties of CONNECT.
    public enum Context: Hashable, Sendable {
        case packet(MQTTPacketType)
        case will

        var name: String {
            switch self {
            case .packet(let t): return t.name
            case .will: return "the will properties of CONNECT"
            }
        }
    }

    /// What the specification says of a property: its name and JSON key (the views read them).
    public struct Definition: Sendable {
        public let name: String
        public let key: FieldKey
        let type: ValueType
        let contexts: Set<Context>
        /// 0/1-valued bytes: any other value is a Protocol Error.
        var isZeroOrOne = false
    }

    private static let pubWill: Set<Context> = [.packet(.publish), .will]
    private static let reasonStringPackets: Set<Context> = [
        .packet(.connack), .packet(.puback), .packet(.pubrec), .packet(.pubrel), .packet(.pubcomp),
        .packet(.suback), .packet(.unsuback), .packet(.disconnect), .packet(.auth)]
    private static let everyPacketWithProperties: Set<Context> = reasonStringPackets.union([
        .packet(.connect), .packet(.publish), .will, .packet(.subscribe), .packet(.unsubscribe)])

    static let definitions: [Int: Definition] = [
        0x01: Definition(name: "Payload Format Indicator", key: "payload_format_indicator", type: .byte, contexts: pubWill, isZeroOrOne: true),
        0x02: Definition(name: "Message Expiry Interval", key: "message_expiry_interval", type: .fourByteInteger, contexts: pubWill),
        0x03: Definition(name: "Content Type", key: "content_type", type: .utf8String, contexts: pubWill),
        0x08: Definition(name: "Response Topic", key: "response_topic", type: .utf8String, contexts: pubWill),
        0x09: Definition(name: "Correlation Data", key: "correlation_data", type: .binaryData, contexts: pubWill),
        0x0B: Definition(name: "Subscription Identifier", key: "subscription_identifier", type: .variableByteInteger,
                         contexts: [.packet(.publish), .packet(.subscribe)]),
        0x11: Definition(name: "Session Expiry Interval", key: "session_expiry_interval", type: .fourByteInteger,
                         contexts: [.packet(.connect), .packet(.connack), .packet(.disconnect)]),
        0x12: Definition(name: "Assigned Client Identifier", key: "assigned_client_identifier", type: .utf8String,
                         contexts: [.packet(.connack)]),
        0x13: Definition(name: "Server Keep Alive", key: "server_keep_alive", type: .twoByteInteger, contexts: [.packet(.connack)]),
        0x15: Definition(name: "Authentication Method", key: "authentication_method", type: .utf8String,
                         contexts: [.packet(.connect), .packet(.connack), .packet(.auth)]),
        0x16: Definition(name: "Authentication Data", key: "authentication_data", type: .binaryData,
                         contexts: [.packet(.connect), .packet(.connack), .packet(.auth)]),
        0x17: Definition(name: "Request Problem Information", key: "request_problem_information", type: .byte,
                         contexts: [.packet(.connect)], isZeroOrOne: true),
        0x18: Definition(name: "Will Delay Interval", key: "will_delay_interval", type: .fourByteInteger, contexts: [.will]),
        0x19: Definition(name: "Request Response Information", key: "request_response_information", type: .byte,
                         contexts: [.packet(.connect)], isZeroOrOne: true),
        0x1A: Definition(name: "Response Information", key: "response_information", type: .utf8String, contexts: [.packet(.connack)]),
        0x1C: Definition(name: "Server Reference", key: "server_reference", type: .utf8String,
                         contexts: [.packet(.connack), .packet(.disconnect)]),
        0x1F: Definition(name: "Reason String", key: "reason_string", type: .utf8String, contexts: reasonStringPackets),
        0x21: Definition(name: "Receive Maximum", key: "receive_maximum", type: .twoByteInteger,
                         contexts: [.packet(.connect), .packet(.connack)]),
        0x22: Definition(name: "Topic Alias Maximum", key: "topic_alias_maximum", type: .twoByteInteger,
                         contexts: [.packet(.connect), .packet(.connack)]),
        0x23: Definition(name: "Topic Alias", key: "topic_alias", type: .twoByteInteger, contexts: [.packet(.publish)]),
        0x24: Definition(name: "Maximum QoS", key: "maximum_qos", type: .byte, contexts: [.packet(.connack)], isZeroOrOne: true),
        0x25: Definition(name: "Retain Available", key: "retain_available", type: .byte, contexts: [.packet(.connack)], isZeroOrOne: true),
        0x26: Definition(name: "User Property", key: "user_properties", type: .utf8StringPair, contexts: everyPacketWithProperties),
        0x27: Definition(name: "Maximum Packet Size", key: "maximum_packet_size", type: .fourByteInteger,
                         contexts: [.packet(.connect), .packet(.connack)]),
        0x28: Definition(name: "Wildcard Subscription Available", key: "wildcard_subscription_available", type: .byte,
                         contexts: [.packet(.connack)], isZeroOrOne: true),
        0x29: Definition(name: "Subscription Identifier Available", key: "subscription_identifier_available", type: .byte,
                         contexts: [.packet(.connack)], isZeroOrOne: true),
        0x2A: Definition(name: "Shared Subscription Available", key: "shared_subscription_available", type: .byte,
                         contexts: [.packet(.connack)], isZeroOrOne: true),
    ]

    public var definition: Definition? { Self.definitions[rawValue] }

    /// The specification's name, e.g. `Topic Alias`; unknown identifiers read `0x2B (unknown)`.
    public var name: String {
        definition?.name ?? (rawValue >= 0 && rawValue < 256 ? "0x\(hexByte(UInt8(rawValue))) (unknown)" : "\(rawValue) (unknown)")
    }

    /// The value encoding, or nil for an unknown identifier.
    public var valueType: ValueType? { definition?.type }

    /// Whether MQTT 5.0 §2.2.2.2 lets this property appear in `context`.
    public func isAllowed(in context: Context) -> Bool {
        definition?.contexts.contains(context) ?? false
    }

    public var description: String { name }
}
