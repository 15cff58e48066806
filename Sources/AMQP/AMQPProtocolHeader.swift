import Dissection

/// The 8-byte protocol header a client sends first, `AMQP` + 4 octets (AMQP 0-9-1 §4.2.2).
/// A server that does not support the version asked for answers with its own header and
/// closes the connection. Other AMQP versions are recognised and named, not dissected.
public struct AMQPProtocolHeader: Sendable, Equatable {
    /// Which protocol family a header announces.
    public enum Family: Sendable, Equatable {
        /// AMQP 0-9-1, the protocol this module decodes.
        case amqp091
        /// An older 0-x version (0-8, 0-9, 0-10): framed like 0-9-1 up to 0-9, not identical.
        case amqp0x
        /// AMQP 1.0, its TLS and its SASL layer: a different protocol altogether.
        case amqp10
        case unknown
    }

    /// The four octets after `AMQP`.
    public var octets: (UInt8, UInt8, UInt8, UInt8)

    /// The literal `AMQP` 0-9-1 header.
    public static let amqp091: [UInt8] = [0x41, 0x4D, 0x51, 0x50, 0, 0, 9, 1]

    /// Reads a header; nil unless the bytes are exactly 8 and start with `AMQP`.
    public init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count == 8, bytes.prefix(4).elementsEqual([0x41, 0x4D, 0x51, 0x50]) else { return nil }
        let s = bytes.startIndex
        octets = (bytes[s + 4], bytes[s + 5], bytes[s + 6], bytes[s + 7])
    }

    public static func == (a: AMQPProtocolHeader, b: AMQPProtocolHeader) -> Bool {
        a.octets == b.octets
    }

    public var family: Family {
        switch octets {
        case (0, 0, 9, 1): return .amqp091
        case (1, 1, 8, 0), (1, 1, 0, 9), (1, 1, 0, 10), (1, 1, 9, 1): return .amqp0x
        case (0, 1, 0, 0), (2, 1, 0, 0), (3, 1, 0, 0): return .amqp10
        default: return .unknown
        }
    }

    /// `AMQP 0-9-1`, `AMQP 0-8`, `AMQP 1.0 SASL`, or `AMQP 5 4 3 2 (unknown)`.
    public var versionName: String {
        switch octets {
        case (0, 0, 9, 1): return "AMQP 0-9-1"
        case (1, 1, 8, 0): return "AMQP 0-8"
        case (1, 1, 0, 9): return "AMQP 0-9"
        case (1, 1, 0, 10): return "AMQP 0-10"
        // Some old Qpid clients wrote 0-9-1 this way.
        case (1, 1, 9, 1): return "AMQP 0-9-1 (old-style header)"
        case (0, 1, 0, 0): return "AMQP 1.0"
        case (2, 1, 0, 0): return "AMQP 1.0 TLS"
        case (3, 1, 0, 0): return "AMQP 1.0 SASL"
        default: return "AMQP \(octets.0) \(octets.1) \(octets.2) \(octets.3) (unknown)"
        }
    }
}
