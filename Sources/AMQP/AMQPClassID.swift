import Dissection

/// A class id (AMQP 0-9-1 §4.2.4, §4.2.6.1). Open: ids the spec does not define are kept and
/// printed as `0x0063 (unknown)`.
public struct AMQPClassID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    public static let connection = AMQPClassID(rawValue: 10)
    public static let channel = AMQPClassID(rawValue: 20)
    public static let access = AMQPClassID(rawValue: 30)
    public static let exchange = AMQPClassID(rawValue: 40)
    public static let queue = AMQPClassID(rawValue: 50)
    public static let basic = AMQPClassID(rawValue: 60)
    public static let confirm = AMQPClassID(rawValue: 85)
    public static let tx = AMQPClassID(rawValue: 90)

    /// The spec's description of the class, if it defines one.
    public var spec: AMQPClassSpec? { AMQPSpec.class(id: rawValue) }

    /// `basic`, or nil for an id the spec does not define.
    public var name: String? { spec?.name }

    /// `basic (60)`, or `0x0063 (unknown)`.
    public var description: String {
        if let name { return "\(name) (\(rawValue))" }
        return AMQPFrameType.unknown(UInt64(rawValue), digits: 4)
    }
}
