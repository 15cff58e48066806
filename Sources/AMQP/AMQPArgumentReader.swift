import Dissection

/// Reads arguments or properties in their spec types (AMQP 0-9-1 §4.2.5) into typed values with
/// their byte ranges, packing consecutive bits into octets as §4.2.5.2 says. The generated
/// decoders (`AMQPMethod.decodeArguments`, `AMQPBasicProperties.decode`) call one reader per
/// argument in wire order; each returns nil when the bytes ran out (the caller reports that,
/// knowing which argument it was) and counts the values it read in `count`.
package struct AMQPArgumentReader {
    package var reader: ByteReader
    /// PDU offset of the reader's first byte.
    package let base: Int
    package let options: AMQPOptions
    package var problems: [Problem] = []
    /// How many values were read.
    package var count = 0
    /// The short strings read lately on the connection, handed in and back by the decoder that
    /// owns them (`AMQPFrameDecoder`): the same exchange, routing key and consumer tag on every
    /// publish and delivery are one String each, made once, not one per frame. Nil: each made.
    package var recent: RecentStrings?

    private var tables: AMQPFieldTableDecoder
    /// The field tables' entry names read lately (`AMQPFieldTableDecoder.recentNames`).
    package var recentNames: RecentStrings? {
        get { tables.recentNames }
        set { tables.recentNames = newValue }
    }
    private var bitOctet: UInt8 = 0
    private var bitsUsed = 8
    private var bitOffset = 0

    /// Arguments that carry credentials; shown as secrets.
    package static let secretArguments: Set<String> = ["response", "new-secret"]

    /// Where `bytes` lie (nil when there are none): the decoder reads them inside their
    /// `withUnsafeBufferPointer`, which the reader must not outlive. Short strings are read there:
    /// a slice of the bytes per string retained and released the packet's array.
    private let address: UnsafePointer<UInt8>?

    package init(_ bytes: ArraySlice<UInt8>, base: Int, options: AMQPOptions, address: UnsafePointer<UInt8>?) {
        self.reader = ByteReader(bytes)
        self.base = base
        self.options = options
        self.tables = AMQPFieldTableDecoder(options: options)
        self.address = address
    }

    /// The PDU offset of the next byte.
    package var offset: Int { base + reader.offset }

    @inline(__always)
    private mutating func ranged<T>(_ start: Int, _ value: T?) -> Ranged<T>? {
        guard let value else { return nil }
        count += 1
        return Ranged(value, (base + start)..<(base + reader.offset))
    }

    package mutating func octet() -> Ranged<UInt8>? {
        finishBits()
        let start = reader.offset
        return ranged(start, reader.readUInt8())
    }

    package mutating func short() -> Ranged<UInt16>? {
        finishBits()
        let start = reader.offset
        return ranged(start, reader.readUInt16())
    }

    package mutating func long() -> Ranged<UInt32>? {
        finishBits()
        let start = reader.offset
        return ranged(start, reader.readUInt32())
    }

    package mutating func longlong() -> Ranged<UInt64>? {
        finishBits()
        let start = reader.offset
        return ranged(start, reader.readUInt64())
    }

    /// §4.2.5.4: a timestamp is a longlong of seconds.
    package mutating func timestamp() -> Ranged<UInt64>? {
        longlong()
    }

    package mutating func shortString() -> Ranged<String>? {
        finishBits()
        let start = reader.offset
        guard let length = reader.readUInt8(), reader.skip(Int(length)) else { return nil }
        // A length was read, so there are bytes and an address.
        let bytes = UnsafeBufferPointer(start: address! + (reader.offset - Int(length)), count: Int(length))
        let text = recent == nil ? AMQPText.shortString(bytes) : recent!.string(bytes) { AMQPText.shortString($0) }
        return ranged(start, text)
    }

    /// `name` is the argument's spec name, for the problem of a length past the end.
    package mutating func longString(_ name: String) -> Ranged<AMQPLongString>? {
        finishBits()
        let start = reader.offset
        guard let length32 = reader.readUInt32() else { return nil }
        let length = Int(length32)
        let bytes: ArraySlice<UInt8>
        if length > reader.remaining {
            problems.append(Problem(.error, .lengthPastEnd,
                                    "\(name) claims \(length) bytes but only \(reader.remaining) remain",
                                    reference: "AMQP 0-9-1 §4.2.5.3", range: (base + start)..<(base + start + 4)))
            bytes = reader.readRest()
        } else {
            bytes = reader.readBytes(length) ?? []
        }
        return ranged(start, AMQPLongString(bytes: bytes, declaredLength: length))
    }

    /// `label` is the argument's label, for the problems of a length past the end.
    package mutating func table(_ label: String) -> Ranged<AMQPFieldTable>? {
        finishBits()
        guard let table = tables.readTable(&reader, base: base, label: label) else { return nil }
        problems += tables.problems
        tables.problems = []
        count += 1
        return table
    }

    package mutating func bit() -> AMQPBit? {
        if bitsUsed == 8 {
            finishBits()
            bitOffset = reader.offset
            guard let octet = reader.readUInt8() else { return nil }
            bitOctet = octet
            bitsUsed = 0
        }
        let index = bitsUsed
        bitsUsed += 1
        count += 1
        return AMQPBit(bitOctet >> UInt8(index) & 1 == 1, range: (base + bitOffset)..<(base + bitOffset + 1), bit: index)
    }

    /// Closes the current bit octet: bits past the last bit argument are reserved. Asked before
    /// every argument: inlined, it is one comparison when no bit octet is open.
    @inline(__always)
    package mutating func finishBits() {
        if bitsUsed < 8 { closeBitOctet() }
    }

    private mutating func closeBitOctet() {
        let unused = bitOctet >> UInt8(bitsUsed)
        if unused != 0 {
            problems.append(Problem(.warning, .reservedBits,
                                    "reserved bits set in the flags octet (\(AMQPHex.string(UInt64(bitOctet), digits: 2)))",
                                    reference: "AMQP 0-9-1 §4.2.5.2", range: (base + bitOffset)..<(base + bitOffset + 1)))
        }
        bitsUsed = 8
    }
}
