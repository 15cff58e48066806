import Dissection

/// Reads arguments or properties in their spec types (AMQP 0-9-1 §4.2.5), packing
/// consecutive bits into octets as §4.2.5.2 says.
struct AMQPArgumentReader {
    var reader: ByteReader
    /// PDU offset of the reader's first byte.
    let base: Int
    let options: AMQPOptions
    var problems: [Problem] = []
    var values = AMQPArgumentValues()

    private var tables: AMQPFieldTableDecoder
    private var bitOctet: UInt8 = 0
    private var bitsUsed = 8
    private var bitOffset = 0

    /// The value `skim` gives a field table it checks but does not decode.
    private static let undecodedTable = Field("", "")

    /// Arguments that carry credentials; shown as secrets.
    static let secretArguments: Set<String> = ["response", "new-secret"]

    init(_ bytes: ArraySlice<UInt8>, base: Int, options: AMQPOptions) {
        self.reader = ByteReader(bytes)
        self.base = base
        self.options = options
        self.tables = AMQPFieldTableDecoder(options: options)
    }

    /// Reads one argument into `values` and its field; nil when the bytes ran out (the caller
    /// reports that). `skim` reads the value alone. A bit argument's field shows `bitLines` (the
    /// method spec's) in the text tree.
    mutating func read(_ arg: AMQPArgumentSpec, bitLines: (clear: String, set: String)? = nil) -> Field? {
        if arg.type == .table { return readTableField(arg) }
        if arg.type != .bit { finishBits() }
        let start = reader.offset
        guard skim(arg) else { return nil }
        let value = values.entries[values.entries.count - 1].value
        // The parts first, then the field in one expression: a field kept in a `var` and changed
        // is copied into the caller's array, one built in place is moved (see `Field.init`).
        var fieldValue = FieldValue.none
        var range = (base + start)..<(base + reader.offset)
        var line: String?
        switch (arg.type, value) {
        case (.bit, .bool(let set)):
            fieldValue = .bool(set)
            range = (base + bitOffset)..<(base + bitOffset + 1)
            if Field.buildsTextLines, let bitLines { line = set ? bitLines.set : bitLines.clear }
        case (.longlong, _):
            // The value keeps an Int (clamped); the field shows the wire's unsigned value.
            let v = rawUInt64(at: start)
            fieldValue = v <= UInt64(Int.max) ? .int(Int(v)) : .string(String(v))
        case (.timestamp, .int(let seconds)):
            fieldValue = .int(seconds)
            if Field.buildsTextLines {
                let v = rawUInt64(at: start)
                line = "\(arg.label): \(v) (\(AMQPText.utcTime(v)))"
            }
        case (_, .int(let v)):
            fieldValue = .int(v)
        case (_, .string(let text)):
            fieldValue = .string(text)
        case (_, .longString(let bytes, let length)):
            if AMQPArgumentReader.secretArguments.contains(arg.name) {
                fieldValue = .secret(AMQPText.escaped(bytes.prefix(AMQPOptions.longStringPreviewBytes)))
            } else {
                fieldValue = Preview.value(of: bytes, length: length, limit: AMQPOptions.longStringPreviewBytes)
            }
        default:
            break
        }
        return Field(arg.key, arg.label, fieldValue, line: line, range: range)
    }

    /// The 8 bytes at reader offset `at`, big-endian (already read once by `skim`).
    private func rawUInt64(at offset: Int) -> UInt64 {
        let bytes = reader.bytes
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[bytes.startIndex + offset + i]) }
        return v
    }

    /// A field table, decoded into its field tree.
    private mutating func readTableField(_ arg: AMQPArgumentSpec) -> Field? {
        finishBits()
        let start = reader.offset
        guard var table = tables.readTable(&reader, base: base, key: arg.key, label: arg.label) else { return nil }
        problems += tables.problems
        tables.problems = []
        table.range = (base + start)..<(base + reader.offset)
        values.append(arg, .table(table))
        return table
    }

    /// Reads one argument's value into `values`, building no field; false when the bytes ran
    /// out. A field table is checked, not decoded (its value is an empty table): false too when
    /// decoding it would report a problem, which only the full decoder words.
    mutating func skim(_ arg: AMQPArgumentSpec) -> Bool {
        if arg.type != .bit { finishBits() }
        let start = reader.offset
        let value: AMQPArgumentValue
        switch arg.type {
        case .bit:
            if bitsUsed == 8 {
                finishBits()
                bitOffset = reader.offset
                guard let octet = reader.readUInt8() else { return false }
                bitOctet = octet
                bitsUsed = 0
            }
            value = .bool(bitOctet >> UInt8(bitsUsed) & 1 == 1)
            bitsUsed += 1
        case .octet, .short, .long, .longlong, .timestamp, .shortstr:
            guard let scalar = AMQPArgumentValue.readScalar(arg.type, from: &reader, shortString: AMQPText.shortString) else { return false }
            value = scalar
        case .longstr:
            guard let length32 = reader.readUInt32() else { return false }
            let length = Int(length32)
            let bytes: ArraySlice<UInt8>
            if length > reader.remaining {
                problems.append(Problem(.error, "length-past-end",
                                        "\(arg.name) claims \(length) bytes but only \(reader.remaining) remain",
                                        reference: "AMQP 0-9-1 §4.2.5.3", range: (base + start)..<(base + start + 4)))
                bytes = reader.readRest()
            } else {
                bytes = reader.readBytes(length) ?? []
            }
            value = .longString(bytes, length: length)
        case .table:
            guard AMQPFieldTableDecoder.checkTable(&reader, depthLimit: options.effectiveTableDepth) == true else { return false }
            value = .table(Self.undecodedTable)
        }
        values.append(arg, value)
        return true
    }

    /// Closes the current bit octet: bits past the last bit argument are reserved.
    mutating func finishBits() {
        if bitsUsed < 8 {
            let unused = bitOctet >> UInt8(bitsUsed)
            if unused != 0 {
                problems.append(Problem(.warning, "reserved-bits",
                                        "reserved bits set in the flags octet (\(AMQPHex.string(UInt64(bitOctet), digits: 2)))",
                                        reference: "AMQP 0-9-1 §4.2.5.2", range: (base + bitOffset)..<(base + bitOffset + 1)))
            }
        }
        bitsUsed = 8
    }
}
