import Dissection

/// An MQTT protocol version, as named by the protocol level byte of CONNECT.
public enum MQTTVersion: Sendable, Hashable, CaseIterable {
    /// MQTT 3.1 (protocol name `MQIsdp`, level 3).
    case v3_1
    /// MQTT 3.1.1 (protocol name `MQTT`, level 4).
    case v3_1_1
    /// MQTT 5.0 (protocol name `MQTT`, level 5).
    case v5

    /// The version for a CONNECT protocol level, or nil for a level no version uses.
    public init?(level: Int) {
        switch level {
        case 3: self = .v3_1
        case 4: self = .v3_1_1
        case 5: self = .v5
        default: return nil
        }
    }

    /// The protocol level byte of CONNECT.
    public var level: Int {
        switch self {
        case .v3_1: return 3
        case .v3_1_1: return 4
        case .v5: return 5
        }
    }

    /// `3.1`, `3.1.1` or `5.0`.
    public var name: String {
        switch self {
        case .v3_1: return "3.1"
        case .v3_1_1: return "3.1.1"
        case .v5: return "5.0"
        }
    }

    /// The protocol name CONNECT carries for this version.
    public var protocolName: String { self == .v3_1 ? "MQIsdp" : "MQTT" }

    var isV5: Bool { self == .v5 }
}
