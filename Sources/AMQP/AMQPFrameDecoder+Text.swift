import Dissection

extension AMQPFrameDecoder {
    /// What a written fast path's `Decoded` holds until its PDU is made: shared, so no box is
    /// made for it per frame.
    static let placeholder = DissectedPDU(protocolName: "amqp", summary: "", fields: [], wireLength: 0)

    /// The fast path of `PDUDetail.text`: a whole, well-ended frame of a frequent kind (the
    /// methods `isFrequentMethod` names, a content header, a body) written straight into its text
    /// tree (`DissectedPDU.textTree`) and summary, the same bytes the full decoder's field tree
    /// prints as, with what the connection state needs (method arguments; the header's class,
    /// body size and property summary); nil when the frame needs the full decoder. Like the
    /// facts path it vouches only for frames in which the full decoder finds no problem (a wrong
    /// channel, reserved bits, a bad field table, trailing bytes go to the full decoder, which
    /// reports them). Nil too when `textLines` (by default `AMQPOptions.textLines`) is off: the full decoder
    /// then drops the lines this path writes.
    ///
    /// `tree` and `line` (the summary line) are buffers reused from frame to frame (a
    /// connection's), emptied here.
    func decodeText(_ frame: AMQPRawFrame, style: TextTree.Style, tree: inout ByteSink, line summaryLine: inout ByteSink,
                    textLines: Bool? = nil) -> Decoded? {
        let textLines = textLines ?? options.textLines
        guard textLines, frame.isWhole, let end = frame.frameEnd, end == AMQPSpec.frameEnd, frame.channel != 0 else { return nil }
        tree.removeAll()
        summaryLine.removeAll()
        var decoded = Decoded(pdu: Self.placeholder)
        tree.append(AMQPTextLines.frameTypeLine(frame.type))
        line("Channel", Int(frame.channel), into: &tree)
        line("Length", Int(frame.size), into: &tree)
        switch frame.type {
        case .method:
            guard let method = writeMethod(frame.payload, into: &tree) else { return nil }
            decoded.method = method
        case .header:
            guard let header = writeHeader(frame.payload, style: style, json: false, into: &tree, parts: &summaryLine) else { return nil }
            decoded.header = header
        case .body:
            let size = Int(frame.size)
            tree.literal("    Body")
            frame.payload.withUnsafeBufferPointer {
                TextTree.writePreview(of: $0, length: size, limit: options.bodyPreviewBytes, style: style, into: &tree)
            }
            tree.literal("\n")
            line("Body length", size, into: &tree)
        default:
            return nil
        }
        // The guard above took only a good frame-end.
        tree.append(AMQPTextLines.goodFrameEndLine)
        Self.writeSummary(of: frame, decoded, detailed: options.summaryDetail, into: &summaryLine)
        decoded.pdu = DissectedPDU(protocolName: "amqp", summaryBytes: summaryLine.bytes, writtenTree: tree.bytes, format: .text,
                                   wireLength: frame.wireLength)
        return decoded
    }

    /// The summary line of a frame a written fast path took (a frequent method, a content header
    /// or a body), into `line`: as the full decoder words it, made into no String.
    static func writeSummary(of frame: AMQPRawFrame, _ decoded: Decoded, detailed: Bool, into line: inout ByteSink) {
        switch frame.type {
        case .method:
            guard let method = decoded.method, let spec = method.spec else { return }
            if detailed { AMQPMethodDecoder.writeSummary(spec, method.values, into: &line) } else { line.append(spec.fullName) }
        case .header:
            if let header = decoded.header { writeHeaderSummary(header, detailed: detailed, into: &line) }
        default:
            writeBodySummary(frame, detailed: detailed, into: &line)
        }
    }

    /// A frequent method's lines (`frequentMethod`): class, method, and its arguments, which are
    /// numbers, short strings and bits; nil for any other value (the full decoder's).
    private func writeMethod(_ payload: ArraySlice<UInt8>, into tree: inout ByteSink) -> AMQPMethodDecoder.Result? {
        guard let method = frequentMethod(payload), let spec = method.spec,
              let pieces = AMQPMethodPieces.of(spec) else { return nil }
        tree.append(pieces.head)
        let entries = method.values.entries
        guard entries.count <= pieces.argumentLines.count else { return nil }
        for i in entries.indices {
            switch entries[i].value {
            case .bool(let set):
                if let lines = pieces.bitLines[i] {
                    tree.append(set ? lines.set : lines.clear)
                } else {
                    tree.append(pieces.argumentLines[i])
                    tree.literal(set ? "True\n" : "False\n")
                }
            case .int(let v):
                // A long-long above Int.max is clamped to it in the values, where the full decoder
                // prints the wire's digits: Int.max itself (clamped or not) goes to the full decoder.
                if v == Int.max, entries[i].spec.type == .longlong { return nil }
                tree.append(pieces.argumentLines[i])
                tree.append(v)
                tree.literal("\n")
            case .string(let s):
                tree.append(pieces.argumentLines[i])
                tree.append(s.isEmpty ? "\"\"" : s)
                tree.literal("\n")
            default:
                return nil
            }
        }
        return method
    }

    /// A content header (AMQP 0-9-1 §4.2.6.1) with weight 0, one property-flags word naming only
    /// defined properties, and properties that fill the payload exactly, of the types messages
    /// use: short strings in printable ASCII, octets, shorts, longs, timestamps and field tables
    /// of scalar entries (`writeTable`). Each property's line and its summary part are written
    /// as it is read; the result's `properties` stay empty (only the full decoder and the facts
    /// path collect them). With `json`, the JSON members after the frame's (`,"class_id":…`)
    /// instead of the text lines.
    ///
    /// The summary parts are written into `parts`, which is emptied (the frame's summary line,
    /// written after this).
    func writeHeader(_ payload: ArraySlice<UInt8>, style: TextTree.Style, json: Bool,
                     into tree: inout ByteSink, parts: inout ByteSink) -> AMQPContentHeaderDecoder.Result? {
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let weight = r.readUInt16(), weight == 0, let bodySize = r.readUInt64(),
              bodySize <= UInt64(Int.max), let flags = r.readUInt16(), flags & 1 == 0,
              let properties = AMQPSpec.properties(classID: classID) else { return nil }
        let pieces = AMQPPropertyPieces.of(classID: classID)

        if json {
            tree.literal(",\"class_id\":")
            tree.append(Int(classID))
            tree.literal(",\"weight\":0,\"body_size\":")
            tree.append(Int(bodySize))
            tree.literal(",\"property_flags\":")
            tree.append(Int(flags))
            if flags != 0 { tree.literal(",\"properties\":{") }
        } else {
            writeHeaderLines(classID: classID, bodySize: bodySize, flags: flags, pieces: pieces, into: &tree)
        }
        var first = true

        // The base first: reading the rest moves the offset to the end.
        let base = 7 + r.offset
        var reader = AMQPArgumentReader(r.readRest(), base: base, options: options)
        // `name=value` pairs as `AMQPContentHeaderDecoder.summary` words them.
        parts.removeAll()
        for bit in 0..<15 where flags >> UInt16(15 - bit) & 1 == 1 {
            guard bit < pieces.count else { return nil }
            // The property's pieces, made once per class: no string of its spec is read here.
            let piece = pieces[bit]
            if parts.bytes.count > 0 { parts.literal(" ") }
            parts.append(piece.summary)
            switch piece.type {
            case .shortstr:
                guard let length = reader.reader.readUInt8(), let bytes = reader.reader.readBytes(Int(length)) else { return nil }
                let written = bytes.withUnsafeBufferPointer { p -> Bool in
                    // Printable ASCII is its own text (`AMQPText.shortString`), one byte per character.
                    for b in p where b < 0x20 || b > 0x7E { return false }
                    if json {
                        if !first { tree.literal(",") }
                        first = false
                        tree.append(piece.jsonKey)
                        JSONString.escape(bytes: p, into: &tree)
                    } else {
                        tree.append(piece.line)
                        if p.isEmpty { tree.literal("\"\"") } else { tree.append(bytes: p) }
                        tree.literal("\n")
                    }
                    // `AMQPText.summaryValue(s, limit: 40)`: cut past 40, quoted when empty or spaced.
                    let shown = UnsafeBufferPointer(rebasing: p.prefix(40))
                    let quoted = p.isEmpty || shown.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") }
                    if quoted { parts.literal("\"") }
                    parts.append(bytes: shown)
                    if p.count > 40 { parts.literal("...") }
                    if quoted { parts.literal("\"") }
                    return true
                }
                guard written else { return nil }
            case .octet, .short, .long, .timestamp:
                let value: UInt64
                switch piece.type {
                case .octet: guard let v = reader.reader.readUInt8() else { return nil }; value = UInt64(v)
                case .short: guard let v = reader.reader.readUInt16() else { return nil }; value = UInt64(v)
                case .long: guard let v = reader.reader.readUInt32() else { return nil }; value = UInt64(v)
                default: guard let v = reader.reader.readUInt64(), v <= UInt64(Int.max) else { return nil }; value = v
                }
                if json {
                    if !first { tree.literal(",") }
                    first = false
                    tree.append(piece.jsonKey)
                    tree.append(Int(value))
                    if piece.type == .timestamp { AMQPText.writeUTCTime(value, into: &parts) } else { parts.append(Int(value)) }
                    continue
                }
                tree.append(piece.line)
                tree.append(Int(value))
                if piece.type == .timestamp {
                    tree.literal(" (")
                    AMQPText.writeUTCTime(value, into: &tree)
                    tree.literal(")")
                    AMQPText.writeUTCTime(value, into: &parts)
                } else {
                    if piece.isDeliveryMode {
                        // As the full decoder words it.
                        if value == 1 { tree.literal(" (non-persistent)") } else if value == 2 { tree.literal(" (persistent)") }
                    }
                    parts.append(Int(value))
                }
                tree.literal("\n")
            case .table:
                let count: Int?
                let prop = properties[bit]
                if json {
                    count = writeTableJSON(&reader.reader, key: prop.key, first: &first, into: &tree)
                } else {
                    count = writeTable(&reader.reader, label: prop.label, style: style, into: &tree)
                }
                guard let count else { return nil }
                parts.append(count)
            default:
                return nil
            }
        }
        guard reader.reader.remaining == 0 else { return nil }
        if json, flags != 0 { tree.literal("}") }
        return AMQPContentHeaderDecoder.Result(classID: classID, bodySize: bodySize, propertySummary: parts.take())
    }

    /// A content header's lines before its properties: class, weight, body size, the property
    /// flags bit by bit, and `Properties` when any is present.
    private func writeHeaderLines(classID: UInt16, bodySize: UInt64, flags: UInt16, pieces: [AMQPPropertyPieces],
                                  into tree: inout ByteSink) {
        line(AMQPTextLines.classID(classID), into: &tree)
        line("Weight", 0, into: &tree)
        line("Body-Size", Int(bodySize), into: &tree)
        tree.literal("    Property flags: ")
        AMQPHex.append(UInt64(flags), digits: 4, into: &tree)
        tree.literal("\n")
        for i in 0..<min(pieces.count, 15) {
            tree.append(flags >> UInt16(15 - i) & 1 == 1 ? pieces[i].flagPresent : pieces[i].flagAbsent)
        }
        if flags != 0 { tree.literal("    Properties\n") }
    }

    /// A field table of scalar entries (booleans, integers, long strings), written as the
    /// full decoder's table field prints: `Label`, then `name (type): value` a level down.
    /// Returns the number of entries; nil for anything else (nested tables, arrays, floats,
    /// decimals, timestamps, byte arrays, names that are not printable ASCII, a length past the
    /// end, a depth limit of 0), which the full decoder then decodes and reports.
    private func writeTable(_ r: inout ByteReader, label: String, style: TextTree.Style, into tree: inout ByteSink) -> Int? {
        guard options.effectiveTableDepth >= 1, let length = r.readUInt32(), let content = r.readBytes(Int(length)) else { return nil }
        tree.literal("        ")
        tree.append(label)
        if content.isEmpty {
            tree.literal(": (empty table)\n")
            return 0
        }
        tree.literal("\n")
        var t = ByteReader(content)
        var count = 0
        while !t.isAtEnd {
            guard let entry = Self.scalarEntry(&t) else { return nil }
            // `name (type): value`.
            tree.literal("            ")
            t.bytes[entry.name].withUnsafeBufferPointer { tree.append(bytes: $0) }
            tree.literal(" (")
            tree.literal(entry.typeName)
            tree.literal(")")
            // As `TextTree` writes the full decoder's entry field's value.
            switch entry.value {
            case .bool(let v):
                TextTree.writeValue(.bool(v), style: style, into: &tree)
            case .int(let v):
                TextTree.writeValue(.int(v), style: style, into: &tree)
            case .longString(let indices):
                t.bytes[indices].withUnsafeBufferPointer {
                    TextTree.writePreview(of: $0, length: $0.count, limit: AMQPOptions.longStringPreviewBytes, style: style, into: &tree)
                }
            }
            tree.literal("\n")
            count += 1
        }
        return count
    }

    /// A field-table entry of the scalar types the fast paths take (booleans, integers, long
    /// strings), typed and valued as `AMQPFieldTableDecoder.readValue` types and values them.
    ///
    /// Bytes are given as their indices in the reader's bytes, not as slices: an entry holds no
    /// reference, so one read per entry and let go costs nothing to destroy (an optional entry
    /// holding slices went through the runtime's generic value witnesses).
    struct ScalarEntry {
        enum Value {
            case bool(Bool)
            case int(Int)
            /// The whole string (a length past the end is not taken).
            case longString(Range<Int>)
        }
        /// The name's bytes: printable ASCII, so its own text (`AMQPText.shortString`).
        let name: Range<Int>
        /// The type in the text tree's label, `int32`.
        let typeName: StaticString
        let value: Value
    }

    /// Reads one entry; nil for another type, a name that is not printable ASCII, or bytes that
    /// run out: the full decoder's to decode and report.
    static func scalarEntry(_ t: inout ByteReader) -> ScalarEntry? {
        guard let nameLength = t.readUInt8(), let name = t.readBytes(Int(nameLength)), let tag = t.readUInt8() else { return nil }
        for b in name where b < 0x20 || b > 0x7E { return nil }
        let nameIndices = name.startIndex..<name.endIndex
        func entry(_ typeName: StaticString, _ value: ScalarEntry.Value) -> ScalarEntry {
            ScalarEntry(name: nameIndices, typeName: typeName, value: value)
        }
        switch tag {
        case UInt8(ascii: "t"):
            guard let v = t.readUInt8() else { return nil }
            return entry("boolean", .bool(v != 0))
        case UInt8(ascii: "S"):
            guard let length = t.readUInt32(), let bytes = t.readBytes(Int(length)) else { return nil }
            return entry("string", .longString(bytes.startIndex..<bytes.endIndex))
        case UInt8(ascii: "b"):
            guard let v = t.readUInt8() else { return nil }
            return entry("int8", .int(Int(Int8(bitPattern: v))))
        case UInt8(ascii: "B"):
            guard let v = t.readUInt8() else { return nil }
            return entry("uint8", .int(Int(v)))
        case UInt8(ascii: "s"), UInt8(ascii: "U"):
            guard let v = t.readUInt16() else { return nil }
            return entry("int16", .int(Int(Int16(bitPattern: v))))
        case UInt8(ascii: "u"):
            guard let v = t.readUInt16() else { return nil }
            return entry("uint16", .int(Int(v)))
        case UInt8(ascii: "I"):
            guard let v = t.readUInt32() else { return nil }
            return entry("int32", .int(Int(Int32(bitPattern: v))))
        case UInt8(ascii: "i"):
            guard let v = t.readUInt32() else { return nil }
            return entry("uint32", .int(Int(v)))
        case UInt8(ascii: "l"), UInt8(ascii: "L"):
            guard let v = t.readUInt64() else { return nil }
            return entry("int64", .int(Int(Int64(bitPattern: v))))
        default:
            return nil
        }
    }

    /// `    text` and a newline: a root line made elsewhere.
    private func line(_ text: String, into tree: inout ByteSink) {
        tree.literal("    ")
        tree.append(text)
        tree.literal("\n")
    }

    /// `    Label: n` and a newline.
    private func line(_ label: StaticString, _ value: Int, into tree: inout ByteSink) {
        tree.literal("    ")
        tree.literal(label)
        tree.literal(": ")
        tree.append(value)
        tree.literal("\n")
    }
}
