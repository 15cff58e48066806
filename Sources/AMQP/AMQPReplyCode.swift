import Dissection

/// A reply code of connection.close, channel.close or basic.return (AMQP 0-9-1 §1.2 constants).
/// Open: unknown codes are kept and printed as `0x0259 (unknown)`. The named values and names
/// are generated from the spec's constants.
public struct AMQPReplyCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// `PRECONDITION_FAILED`, as RabbitMQ writes it, or nil for a code the spec does not name.
    public var name: String? { AMQPReplyCode.names[rawValue] }

    /// Whether the error closes only the channel or the whole connection.
    public var errorClass: AMQPConstant.ErrorClass? {
        AMQPSpec.constants.first { $0.value == Int(rawValue) && $0.errorClass != nil }?.errorClass
    }

    /// `406 PRECONDITION_FAILED`, or `0x0259 (unknown)`.
    public var description: String {
        if let name { return "\(rawValue) \(name)" }
        return AMQPFrameType.unknown(UInt64(rawValue), digits: 4)
    }
}
