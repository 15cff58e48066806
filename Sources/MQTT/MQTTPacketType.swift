/// The control packet type: the high nibble of the fixed header's first byte.
/// Open: a value no version defines (0) is kept and printed as unknown.
public struct MQTTPacketType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let reserved = MQTTPacketType(rawValue: 0)
    public static let connect = MQTTPacketType(rawValue: 1)
    public static let connack = MQTTPacketType(rawValue: 2)
    public static let publish = MQTTPacketType(rawValue: 3)
    public static let puback = MQTTPacketType(rawValue: 4)
    public static let pubrec = MQTTPacketType(rawValue: 5)
    public static let pubrel = MQTTPacketType(rawValue: 6)
    public static let pubcomp = MQTTPacketType(rawValue: 7)
    public static let subscribe = MQTTPacketType(rawValue: 8)
    public static let suback = MQTTPacketType(rawValue: 9)
    public static let unsubscribe = MQTTPacketType(rawValue: 10)
    public static let unsuback = MQTTPacketType(rawValue: 11)
    public static let pingreq = MQTTPacketType(rawValue: 12)
    public static let pingresp = MQTTPacketType(rawValue: 13)
    public static let disconnect = MQTTPacketType(rawValue: 14)
    /// MQTT 5.0 only; reserved in 3.x.
    public static let auth = MQTTPacketType(rawValue: 15)

    private static let names = ["RESERVED", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
                                "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"]
    // Wireshark's wording, so the text tree reads like the tool people know.
    private static let longNames = ["Reserved", "Connect Command", "Connect Ack", "Publish Message", "Publish Ack",
                                    "Publish Received", "Publish Release", "Publish Complete", "Subscribe Request",
                                    "Subscribe Ack", "Unsubscribe Request", "Unsubscribe Ack", "Ping Request",
                                    "Ping Response", "Disconnect Req", "Authentication Exchange"]

    /// Upper-case name as the specification writes it (`PUBLISH`); `RESERVED` for 0 and for
    /// anything that is not a 4-bit type.
    public var name: String {
        rawValue < 16 ? Self.names[Int(rawValue)] : "RESERVED"
    }

    /// Wireshark's long name, e.g. `Publish Message`.
    public var longName: String {
        rawValue < 16 ? Self.longNames[Int(rawValue)] : "0x\(hexByte(rawValue)) (unknown)"
    }

    public var description: String { name }

    /// MQTT 5.0 §2.1.3 / 3.1.1 §2.2.2: the fixed header flags every type but PUBLISH must carry.
    var requiredFlags: UInt8? {
        switch self {
        case .publish: return nil
        case .pubrel, .subscribe, .unsubscribe: return 0b0010
        default: return 0
        }
    }
}

public func hexByte(_ b: UInt8) -> String {
    let digits: [Character] = Array("0123456789ABCDEF")
    return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
}
