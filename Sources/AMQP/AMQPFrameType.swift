import Dissection

/// The type octet of a frame (AMQP 0-9-1 §4.2.3). Open: an unknown type is kept and printed
/// as `0x9F (unknown)`. The named values are generated from the spec's constants.
public struct AMQPFrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `method`, `header`, `body`, `heartbeat`, or nil for a type the spec does not define.
    public var name: String? {
        switch self {
        case .method: return "method"
        case .header: return "header"
        case .body: return "body"
        case .heartbeat: return "heartbeat"
        default: return nil
        }
    }

    public var isKnown: Bool { name != nil }

    public var description: String {
        if let name { return "\(name) (\(rawValue))" }
        return AMQPFrameType.unknown(UInt64(rawValue), digits: 2)
    }

    /// `0x9F (unknown)`.
    package static func unknown(_ value: UInt64, digits: Int) -> String {
        "\(AMQPHex.string(value, digits: digits)) (unknown)"
    }
}
