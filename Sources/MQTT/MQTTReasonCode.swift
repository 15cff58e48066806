/// An MQTT 5.0 reason code (MQTT 5.0 §2.4). Open: unknown codes are kept and print as `0x9F (unknown)`.
public struct MQTTReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = MQTTReasonCode(rawValue: 0x00)
    public static let grantedQoS1 = MQTTReasonCode(rawValue: 0x01)
    public static let grantedQoS2 = MQTTReasonCode(rawValue: 0x02)
    public static let disconnectWithWillMessage = MQTTReasonCode(rawValue: 0x04)
    public static let noMatchingSubscribers = MQTTReasonCode(rawValue: 0x10)
    public static let noSubscriptionExisted = MQTTReasonCode(rawValue: 0x11)
    public static let continueAuthentication = MQTTReasonCode(rawValue: 0x18)
    public static let reAuthenticate = MQTTReasonCode(rawValue: 0x19)
    public static let unspecifiedError = MQTTReasonCode(rawValue: 0x80)
    public static let malformedPacket = MQTTReasonCode(rawValue: 0x81)
    public static let protocolError = MQTTReasonCode(rawValue: 0x82)
    public static let implementationSpecificError = MQTTReasonCode(rawValue: 0x83)
    public static let unsupportedProtocolVersion = MQTTReasonCode(rawValue: 0x84)
    public static let clientIdentifierNotValid = MQTTReasonCode(rawValue: 0x85)
    public static let badUserNameOrPassword = MQTTReasonCode(rawValue: 0x86)
    public static let notAuthorized = MQTTReasonCode(rawValue: 0x87)
    public static let serverUnavailable = MQTTReasonCode(rawValue: 0x88)
    public static let serverBusy = MQTTReasonCode(rawValue: 0x89)
    public static let banned = MQTTReasonCode(rawValue: 0x8A)
    public static let serverShuttingDown = MQTTReasonCode(rawValue: 0x8B)
    public static let badAuthenticationMethod = MQTTReasonCode(rawValue: 0x8C)
    public static let keepAliveTimeout = MQTTReasonCode(rawValue: 0x8D)
    public static let sessionTakenOver = MQTTReasonCode(rawValue: 0x8E)
    public static let topicFilterInvalid = MQTTReasonCode(rawValue: 0x8F)
    public static let topicNameInvalid = MQTTReasonCode(rawValue: 0x90)
    public static let packetIdentifierInUse = MQTTReasonCode(rawValue: 0x91)
    public static let packetIdentifierNotFound = MQTTReasonCode(rawValue: 0x92)
    public static let receiveMaximumExceeded = MQTTReasonCode(rawValue: 0x93)
    public static let topicAliasInvalid = MQTTReasonCode(rawValue: 0x94)
    public static let packetTooLarge = MQTTReasonCode(rawValue: 0x95)
    public static let messageRateTooHigh = MQTTReasonCode(rawValue: 0x96)
    public static let quotaExceeded = MQTTReasonCode(rawValue: 0x97)
    public static let administrativeAction = MQTTReasonCode(rawValue: 0x98)
    public static let payloadFormatInvalid = MQTTReasonCode(rawValue: 0x99)
    public static let retainNotSupported = MQTTReasonCode(rawValue: 0x9A)
    public static let qosNotSupported = MQTTReasonCode(rawValue: 0x9B)
    public static let useAnotherServer = MQTTReasonCode(rawValue: 0x9C)
    public static let serverMoved = MQTTReasonCode(rawValue: 0x9D)
    public static let sharedSubscriptionsNotSupported = MQTTReasonCode(rawValue: 0x9E)
    public static let connectionRateExceeded = MQTTReasonCode(rawValue: 0x9F)
    public static let maximumConnectTime = MQTTReasonCode(rawValue: 0xA0)
    public static let subscriptionIdentifiersNotSupported = MQTTReasonCode(rawValue: 0xA1)
    public static let wildcardSubscriptionsNotSupported = MQTTReasonCode(rawValue: 0xA2)

    private static let table: [UInt8: (name: String, packets: Set<MQTTPacketType>)] = [
        0x00: ("Success", [.connack, .puback, .pubrec, .pubrel, .pubcomp, .unsuback, .auth, .disconnect, .suback]),
        0x01: ("Granted QoS 1", [.suback]),
        0x02: ("Granted QoS 2", [.suback]),
        0x04: ("Disconnect with Will Message", [.disconnect]),
        0x10: ("No matching subscribers", [.puback, .pubrec]),
        0x11: ("No subscription existed", [.unsuback]),
        0x18: ("Continue authentication", [.auth]),
        0x19: ("Re-authenticate", [.auth]),
        0x80: ("Unspecified error", [.connack, .puback, .pubrec, .suback, .unsuback, .disconnect]),
        0x81: ("Malformed Packet", [.connack, .disconnect]),
        0x82: ("Protocol Error", [.connack, .disconnect]),
        0x83: ("Implementation specific error", [.connack, .puback, .pubrec, .suback, .unsuback, .disconnect]),
        0x84: ("Unsupported Protocol Version", [.connack]),
        0x85: ("Client Identifier not valid", [.connack]),
        0x86: ("Bad User Name or Password", [.connack]),
        0x87: ("Not authorized", [.connack, .puback, .pubrec, .suback, .unsuback, .disconnect]),
        0x88: ("Server unavailable", [.connack]),
        0x89: ("Server busy", [.connack, .disconnect]),
        0x8A: ("Banned", [.connack]),
        0x8B: ("Server shutting down", [.disconnect]),
        0x8C: ("Bad authentication method", [.connack, .disconnect]),
        0x8D: ("Keep Alive timeout", [.disconnect]),
        0x8E: ("Session taken over", [.disconnect]),
        0x8F: ("Topic Filter invalid", [.suback, .unsuback, .disconnect]),
        0x90: ("Topic Name invalid", [.connack, .puback, .pubrec, .disconnect]),
        0x91: ("Packet Identifier in use", [.puback, .pubrec, .suback, .unsuback]),
        0x92: ("Packet Identifier not found", [.pubrel, .pubcomp]),
        0x93: ("Receive Maximum exceeded", [.disconnect]),
        0x94: ("Topic Alias invalid", [.disconnect]),
        0x95: ("Packet too large", [.connack, .disconnect]),
        0x96: ("Message rate too high", [.disconnect]),
        0x97: ("Quota exceeded", [.connack, .puback, .pubrec, .suback, .disconnect]),
        0x98: ("Administrative action", [.disconnect]),
        0x99: ("Payload format invalid", [.connack, .puback, .pubrec, .disconnect]),
        0x9A: ("Retain not supported", [.connack, .disconnect]),
        0x9B: ("QoS not supported", [.connack, .disconnect]),
        0x9C: ("Use another server", [.connack, .disconnect]),
        0x9D: ("Server moved", [.connack, .disconnect]),
        0x9E: ("Shared Subscriptions not supported", [.suback, .disconnect]),
        0x9F: ("Connection rate exceeded", [.connack, .disconnect]),
        0xA0: ("Maximum connect time", [.disconnect]),
        0xA1: ("Subscription Identifiers not supported", [.suback, .disconnect]),
        0xA2: ("Wildcard Subscriptions not supported", [.suback, .disconnect]),
    ]

    /// The specification's name, or nil for a code no packet defines.
    public var knownName: String? { Self.table[rawValue]?.name }

    /// The name as it reads in `packetType` (0x00 is `Normal disconnection` in DISCONNECT and
    /// `Granted QoS 0` in SUBACK); unknown codes read `0x9F (unknown)`.
    public func name(in packetType: MQTTPacketType? = nil) -> String {
        if rawValue == 0, packetType == .disconnect { return "Normal disconnection" }
        if rawValue == 0, packetType == .suback { return "Granted QoS 0" }
        return knownName ?? "0x\(hexByte(rawValue)) (unknown)"
    }

    /// Whether MQTT 5.0 §2.4 lets `packetType` carry this code.
    public func isAllowed(in packetType: MQTTPacketType) -> Bool {
        Self.table[rawValue]?.packets.contains(packetType) ?? false
    }

    /// 0x80 and above report a failure (MQTT 5.0 §2.4).
    public var isFailure: Bool { rawValue >= 0x80 }

    public var description: String { name() }
}

/// A CONNACK return code of MQTT 3.1 and 3.1.1 (3.1.1 §3.2.2.3). Open, like `MQTTReasonCode`.
public struct MQTTConnectReturnCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let accepted = MQTTConnectReturnCode(rawValue: 0)
    public static let unacceptableProtocolVersion = MQTTConnectReturnCode(rawValue: 1)
    public static let identifierRejected = MQTTConnectReturnCode(rawValue: 2)
    public static let serverUnavailable = MQTTConnectReturnCode(rawValue: 3)
    public static let badUserNameOrPassword = MQTTConnectReturnCode(rawValue: 4)
    public static let notAuthorized = MQTTConnectReturnCode(rawValue: 5)

    private static let names = ["Connection Accepted",
                                "Connection Refused: unacceptable protocol version",
                                "Connection Refused: identifier rejected",
                                "Connection Refused: server unavailable",
                                "Connection Refused: bad user name or password",
                                "Connection Refused: not authorized"]

    /// The specification's name, or nil for 6...255 (reserved).
    public var knownName: String? { rawValue < 6 ? Self.names[Int(rawValue)] : nil }

    public var name: String { knownName ?? "0x\(hexByte(rawValue)) (unknown)" }

    public var description: String { name }
}
