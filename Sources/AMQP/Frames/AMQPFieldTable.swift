import Dissection

/// A field table (AMQP 0-9-1 §4.2.5.5, with the type letters RabbitMQ uses): named, typed
/// values in wire order, each with its byte range (offsets from the frame's first byte).
///
/// A table nested deeper than `AMQPOptions.maxFieldTableDepth` is not decoded: `skippedBytes`
/// says how many of its bytes were stepped over. An entry whose value cannot be read (an
/// unknown type letter, bytes cut short) is the last, with the value `.undecoded`.
public struct AMQPFieldTable: Sendable, Equatable {
    public var entries: [Entry]
    /// Set when the table was nested too deep to decode: the bytes of its content.
    public var skippedBytes: Int?

    public init(entries: [Entry] = [], skippedBytes: Int? = nil) {
        self.entries = entries
        self.skippedBytes = skippedBytes
    }

    public struct Entry: Sendable, Equatable {
        public var name: String
        /// The type letter (`S`, `I`, `F`…); nil when the entry ends before it.
        public var type: UInt8?
        public var value: AMQPFieldValue
        /// From the name's length octet to the value's last byte.
        public var range: Range<Int>
    }

    /// The value of the first entry with this name.
    public subscript(name: String) -> AMQPFieldValue? {
        entries.first { $0.name == name }?.value
    }
}

/// A field array (RabbitMQ's `A`): typed values without names.
public struct AMQPFieldArray: Sendable, Equatable {
    public var items: [Item]
    /// Set when the array was nested too deep to decode: the bytes of its content.
    public var skippedBytes: Int?

    public init(items: [Item] = [], skippedBytes: Int? = nil) {
        self.items = items
        self.skippedBytes = skippedBytes
    }

    public struct Item: Sendable, Equatable {
        /// The type letter.
        public var type: UInt8
        public var value: AMQPFieldValue
        /// From the type letter to the value's last byte.
        public var range: Range<Int>
    }
}

/// One value of a field table or array, by type letter. Signed and unsigned as the letter says;
/// `s` and `U` are both signed 16-bit, `l` and `L` both signed 64-bit (RabbitMQ's errata).
///
/// Only the nesting cases are indirect: boxing every value cost an allocation per entry.
public enum AMQPFieldValue: Sendable, Equatable {
    case boolean(Bool)
    case int8(Int8)
    case uint8(UInt8)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case float(Float)
    case double(Double)
    /// `D`: the value is `mantissa / 10^scale` (the mantissa read signed, as RabbitMQ and pika do).
    case decimal(scale: UInt8, mantissa: Int32)
    /// `S`: a long string.
    case longString(AMQPLongString)
    /// `x`: a byte array.
    case bytes(AMQPLongString)
    case timestamp(UInt64)
    case void
    indirect case table(AMQPFieldTable)
    indirect case array(AMQPFieldArray)
    /// The value could not be read: an unknown type letter or bytes cut short (the decoder
    /// reported which). Nothing after it in the table was read.
    case undecoded
}
