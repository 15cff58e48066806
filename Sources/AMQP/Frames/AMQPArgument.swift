import Dissection

/// One method argument or content property as read off the wire, in its spec type (AMQP 0-9-1
/// §4.2.5), with the bytes it came from (offsets from the frame's first byte).
///
/// The generated structs (`AMQPQueueDeclare`, `AMQPBasicProperties`…) hold each argument in its
/// own type; this is the same value without the method's shape, for code that walks any
/// method's arguments in wire order (`AMQPMethod.arguments`), such as the field tree.
public enum AMQPArgument: Sendable, Equatable {
    case octet(Ranged<UInt8>)
    case short(Ranged<UInt16>)
    case long(Ranged<UInt32>)
    case longlong(Ranged<UInt64>)
    /// Seconds since the epoch (§4.2.5.4), unsigned as on the wire.
    case timestamp(Ranged<UInt64>)
    case shortString(Ranged<String>)
    case longString(Ranged<AMQPLongString>)
    case bit(AMQPBit)
    case table(Ranged<AMQPFieldTable>)

    /// The bytes the value came from: a bit's octet, a string with its length prefix.
    public var range: Range<Int> {
        switch self {
        case .octet(let v): return v.range
        case .short(let v): return v.range
        case .long(let v): return v.range
        case .longlong(let v): return v.range
        case .timestamp(let v): return v.range
        case .shortString(let v): return v.range
        case .longString(let v): return v.range
        case .bit(let v): return v.range
        case .table(let v): return v.range
        }
    }
}

/// A bit argument (AMQP 0-9-1 §4.2.5.2): consecutive bits share an octet, lowest bit first.
public struct AMQPBit: Sendable, Equatable {
    public var value: Bool
    /// The octet the bit is packed into.
    public var range: Range<Int>
    /// The bit's position in that octet, 0 for the lowest.
    public var bit: Int

    public init(_ value: Bool, range: Range<Int>, bit: Int) {
        self.value = value
        self.range = range
        self.bit = bit
    }
}

/// A long string (AMQP 0-9-1 §4.2.5.3): the bytes held, and the length the wire declares. They
/// differ when the length runs past the frame (a problem the decoder reports) or the frame was
/// not held whole. Bytes, not text: SASL responses and message ids need not be UTF-8.
public struct AMQPLongString: Sendable, Equatable {
    public var bytes: ArraySlice<UInt8>
    public var declaredLength: Int

    public init(bytes: ArraySlice<UInt8>, declaredLength: Int) {
        self.bytes = bytes
        self.declaredLength = declaredLength
    }

    /// Whether every declared byte is held.
    public var isWhole: Bool { bytes.count == declaredLength }
}
