import Dissection

/// A method's identity on the wire: class id and method id (AMQP 0-9-1 §4.2.4). Open: ids the
/// spec does not define are kept and printed as `0x003C.0x009F (unknown)`.
public struct AMQPMethodID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var classID: UInt16
    public var methodID: UInt16

    public init(classID: UInt16, methodID: UInt16) {
        self.classID = classID
        self.methodID = methodID
    }

    /// Class id in the high 16 bits, method id in the low 16: the 4 bytes as on the wire.
    public init(rawValue: UInt32) {
        self.init(classID: UInt16(truncatingIfNeeded: rawValue >> 16), methodID: UInt16(truncatingIfNeeded: rawValue))
    }

    public var rawValue: UInt32 { UInt32(classID) << 16 | UInt32(methodID) }

    /// The class part.
    public var classPart: AMQPClassID { AMQPClassID(rawValue: classID) }

    public static let connectionStart = AMQPMethodID(classID: 10, methodID: 10)
    public static let connectionStartOK = AMQPMethodID(classID: 10, methodID: 11)
    public static let connectionSecureOK = AMQPMethodID(classID: 10, methodID: 21)
    public static let connectionTune = AMQPMethodID(classID: 10, methodID: 30)
    public static let connectionTuneOK = AMQPMethodID(classID: 10, methodID: 31)
    public static let connectionClose = AMQPMethodID(classID: 10, methodID: 50)
    public static let connectionUpdateSecret = AMQPMethodID(classID: 10, methodID: 70)
    public static let channelClose = AMQPMethodID(classID: 20, methodID: 40)
    public static let queueDeclare = AMQPMethodID(classID: 50, methodID: 10)
    public static let basicPublish = AMQPMethodID(classID: 60, methodID: 40)
    public static let basicReturn = AMQPMethodID(classID: 60, methodID: 50)
    public static let basicDeliver = AMQPMethodID(classID: 60, methodID: 60)
    public static let basicGetOK = AMQPMethodID(classID: 60, methodID: 71)
    public static let basicAck = AMQPMethodID(classID: 60, methodID: 80)
    public static let basicReject = AMQPMethodID(classID: 60, methodID: 90)
    public static let basicNack = AMQPMethodID(classID: 60, methodID: 120)

    /// The spec's description of the method, if it defines one.
    public var spec: AMQPMethodSpec? { AMQPSpec.method(classID: classID, methodID: methodID) }

    /// `basic.publish`, or nil for ids the spec does not define.
    public var name: String? { spec?.fullName }

    /// `basic.publish`, `basic.0x009F (unknown)` or `0x0063.0x0001 (unknown)`.
    public var description: String {
        if let name { return name }
        let method = AMQPFrameType.unknown(UInt64(methodID), digits: 4)
        if let cls = classPart.name { return "\(cls).\(method)" }
        return "\(AMQPHex.string(UInt64(classID), digits: 4)).\(method)"
    }
}
