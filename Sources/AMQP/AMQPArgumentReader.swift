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
    /// False for `PDUDetail.facts`: only `values` are kept, the returned fields are bare, and a
    /// field table is checked, not decoded (its value is then an empty table).
    var buildsFields = true
    /// Set when a field table would need the full decoder to report a problem (`buildsFields` off).
    private(set) var needsFullDecode = false

    private var tables: AMQPFieldTableDecoder
    private var bitOctet: UInt8 = 0
    private var bitsUsed = 8
    private var bitOffset = 0

    private static let bare = Field("", "")

    /// Arguments that carry credentials; shown as secrets.
    static let secretArguments: Set<String> = ["response", "new-secret"]

    init(_ bytes: ArraySlice<UInt8>, base: Int, options: AMQPOptions) {
        self.reader = ByteReader(bytes)
        self.base = base
        self.options = options
        self.tables = AMQPFieldTableDecoder(options: options)
    }

    /// Reads one argument; nil when the bytes ran out (the caller reports that).
    mutating func read(_ arg: AMQPArgumentSpec) -> Field? {
        if arg.type != .bit { finishBits() }
        let start = reader.offset
        // Without fields, the bare placeholder costs no string copies.
        var field = buildsFields ? Field(arg.key, arg.label) : Self.bare
        let value: AMQPArgumentValue
        switch arg.type {
        case .bit:
            if bitsUsed == 8 {
                finishBits()
                bitOffset = reader.offset
                guard let octet = reader.readUInt8() else { return nil }
                bitOctet = octet
                bitsUsed = 0
            }
            let set = bitOctet >> UInt8(bitsUsed) & 1 == 1
            guard buildsFields else {
                bitsUsed += 1
                values.append(arg, .bool(set))
                return field
            }
            if Field.buildsTextLines {
                let mask = String(repeating: ".", count: 7 - bitsUsed) + (set ? "1" : "0") + String(repeating: ".", count: bitsUsed)
                field.line = "\(mask) = \(arg.label): \(set ? "true" : "false")"
            }
            bitsUsed += 1
            field.value = .bool(set)
            field.range = (base + bitOffset)..<(base + bitOffset + 1)
            values.append(arg, .bool(set))
            return field
        case .octet:
            guard let v = reader.readUInt8() else { return nil }
            value = .int(Int(v))
            field.value = .int(Int(v))
        case .short:
            guard let v = reader.readUInt16() else { return nil }
            value = .int(Int(v))
            field.value = .int(Int(v))
        case .long:
            guard let v = reader.readUInt32() else { return nil }
            value = .int(Int(v))
            field.value = .int(Int(v))
        case .longlong:
            guard let v = reader.readUInt64() else { return nil }
            value = .int(Int(clamping: v))
            field.value = v <= UInt64(Int.max) ? .int(Int(v)) : .string(String(v))
        case .timestamp:
            guard let v = reader.readUInt64() else { return nil }
            value = .int(Int(clamping: v))
            field.value = .int(Int(clamping: v))
            if buildsFields && Field.buildsTextLines { field.line = "\(arg.label): \(v) (\(AMQPText.utcTime(v)))" }
        case .shortstr:
            guard let length = reader.readUInt8(), let bytes = reader.readBytes(Int(length)) else { return nil }
            let text = AMQPText.shortString(bytes)
            value = .string(text)
            field.value = .string(text)
        case .longstr:
            guard let length32 = reader.readUInt32() else { return nil }
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
            if !buildsFields {
                // Kept in `values` only.
            } else if AMQPArgumentReader.secretArguments.contains(arg.name) {
                field.value = .secret(AMQPText.escaped(bytes.prefix(AMQPOptions.longStringPreviewBytes)))
            } else {
                field.value = Preview.value(of: bytes, length: length, limit: AMQPOptions.longStringPreviewBytes)
            }
        case .table where !buildsFields:
            guard let clean = AMQPFieldTableDecoder.checkTable(&reader, depthLimit: options.effectiveTableDepth) else { return nil }
            if !clean { needsFullDecode = true }
            value = .table(field)
        case .table:
            guard let table = tables.readTable(&reader, base: base, key: arg.key, label: arg.label) else { return nil }
            problems += tables.problems
            tables.problems = []
            value = .table(table)
            field = table
        }
        field.range = (base + start)..<(base + reader.offset)
        values.append(arg, value)
        return field
    }

    /// Reads one argument into `values` (for `buildsFields` off); false when the bytes ran out.
    mutating func skim(_ arg: AMQPArgumentSpec) -> Bool {
        if case .some = read(arg) { return true }
        return false
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
