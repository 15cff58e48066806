import Dissection

/// Decodes field tables and field arrays (AMQP 0-9-1 §4.2.5.5, with the type letters RabbitMQ
/// uses: see its "AMQP 0-9-1 errata", where `s` is a signed 16-bit integer, not a short string).
///
/// Nesting is capped by `AMQPOptions.maxFieldTableDepth`: a table or array deeper than that is
/// skipped by its length and reported, so recursion stays bounded whatever the input. A length
/// that runs past the bytes present is reported and clamped; nothing is allocated from it.
package struct AMQPFieldTableDecoder {
    package let options: AMQPOptions
    package var problems: [Problem] = []
    /// Set once a nesting breach was reported, so a wide table of deep values reports it once.
    private var reportedDepth = false
    /// The entry names read lately on the connection (`AMQPFrameDecoder`'s, handed in and back):
    /// a publisher's headers have the same few names in every message. Nil: each made.
    package var recentNames: RecentStrings?

    package init(options: AMQPOptions) {
        self.options = options
    }

    /// Reads a `long-uint` length and the table after it, with the range of both. `base` is the
    /// PDU offset of the reader's first byte; `label` names the table in problems. Returns nil
    /// when not even the length is there.
    package mutating func readTable(_ r: inout ByteReader, base: Int, label: String, depth: Int = 0) -> Ranged<AMQPFieldTable>? {
        let start = r.offset
        guard let length32 = r.readUInt32() else { return nil }
        let content = readClamped(&r, Int(length32), base: base, what: "field table \"\(label)\"")
        let range = (base + start)..<(base + r.offset)
        if depth >= options.effectiveTableDepth {
            reportDepth(at: range)
            return Ranged(AMQPFieldTable(skippedBytes: content.count), range)
        }
        return Ranged(AMQPFieldTable(entries: decodeEntries(content, base: base + start + 4, depth: depth + 1)), range)
    }

    /// The entries of a table whose bytes are `content` (without the length).
    package mutating func decodeEntries(_ content: ArraySlice<UInt8>, base: Int, depth: Int) -> [AMQPFieldTable.Entry] {
        var r = ByteReader(content)
        var entries: [AMQPFieldTable.Entry] = []
        // Room for a table of short values at once (an entry takes 3 bytes and more): appending
        // to an empty array reallocated it at the 1st, 2nd and 3rd entry.
        entries.reserveCapacity(min(content.count / 6, 16))
        while !r.isAtEnd {
            let entryStart = r.offset
            guard let nameLength = r.readUInt8(), r.skip(Int(nameLength)) else {
                problems.append(Problem(.error, .tableTruncated,
                                        "field table entry name runs past the end of the table",
                                        reference: "AMQP 0-9-1 §4.2.5.5", range: (base + entryStart)..<(base + content.count)))
                break
            }
            // The name read where it lies in the table's bytes (a parameter, borrowed): a slice of
            // it per entry retained the packet's array and released it.
            let nameEnd = r.offset
            let name = content.withUnsafeBufferPointer { table in
                let bytes = UnsafeBufferPointer(rebasing: table[(nameEnd - Int(nameLength))..<nameEnd])
                return recentNames == nil ? AMQPText.shortString(bytes) : recentNames!.string(bytes) { AMQPText.shortString($0) }
            }
            let type = r.peekUInt8()
            guard let value = readValue(&r, base: base, name: name, depth: depth) else {
                entries.append(AMQPFieldTable.Entry(name: name, type: type, value: .undecoded,
                                                    range: (base + entryStart)..<(base + content.count)))
                break
            }
            entries.append(AMQPFieldTable.Entry(name: name, type: type, value: value, range: (base + entryStart)..<(base + r.offset)))
        }
        return entries
    }

    /// One typed value: a type octet and what follows. Nil (after reporting) when the type is
    /// unknown or the value is cut, since the rest of the table cannot be found then.
    package mutating func readValue(_ r: inout ByteReader, base: Int, name: String, depth: Int) -> AMQPFieldValue? {
        let start = r.offset
        guard let tag = r.readUInt8() else {
            truncated(name, at: base + start, base: base, r)
            return nil
        }
        // On the byte: a switch over Characters compares strings, case by case.
        switch tag {
        case UInt8(ascii: "t"):
            guard let v = r.readUInt8() else { break }
            return .boolean(v != 0)
        case UInt8(ascii: "b"):
            guard let v = r.readUInt8() else { break }
            return .int8(Int8(bitPattern: v))
        case UInt8(ascii: "B"):
            guard let v = r.readUInt8() else { break }
            return .uint8(v)
        case UInt8(ascii: "s"), UInt8(ascii: "U"):
            guard let v = r.readUInt16() else { break }
            return .int16(Int16(bitPattern: v))
        case UInt8(ascii: "u"):
            guard let v = r.readUInt16() else { break }
            return .uint16(v)
        case UInt8(ascii: "I"):
            guard let v = r.readUInt32() else { break }
            return .int32(Int32(bitPattern: v))
        case UInt8(ascii: "i"):
            guard let v = r.readUInt32() else { break }
            return .uint32(v)
        case UInt8(ascii: "l"), UInt8(ascii: "L"):
            // 'l' is RabbitMQ's signed 64-bit (errata); 'L' is the 0-9-1 grammar's
            // long-long-int, also signed (§4.2.5.5), and pika writes it with '>q'.
            guard let v = r.readUInt64() else { break }
            return .int64(Int64(bitPattern: v))
        case UInt8(ascii: "f"):
            guard let v = r.readUInt32() else { break }
            return .float(Float(bitPattern: v))
        case UInt8(ascii: "d"):
            guard let v = r.readUInt64() else { break }
            return .double(Double(bitPattern: v))
        case UInt8(ascii: "D"):
            // §4.2.5.5: decimal-value = scale long-uint, but RabbitMQ and pika read the
            // mantissa as signed 32-bit, so a negative decimal keeps its sign.
            guard let scale = r.readUInt8(), let v = r.readUInt32() else { break }
            return .decimal(scale: scale, mantissa: Int32(bitPattern: v))
        case UInt8(ascii: "S"):
            guard let length = r.readUInt32() else { break }
            let bytes = readClamped(&r, Int(length), base: base, what: "long string \"\(name)\"")
            return .longString(AMQPLongString(bytes: bytes, declaredLength: Int(length)))
        case UInt8(ascii: "x"):
            guard let length = r.readUInt32() else { break }
            let bytes = readClamped(&r, Int(length), base: base, what: "byte array \"\(name)\"")
            return .bytes(AMQPLongString(bytes: bytes, declaredLength: Int(length)))
        case UInt8(ascii: "T"):
            guard let v = r.readUInt64() else { break }
            return .timestamp(v)
        case UInt8(ascii: "V"):
            return .void
        case UInt8(ascii: "F"):
            guard let table = readTable(&r, base: base, label: "\(name) (table)", depth: depth) else { break }
            return .table(table.value)
        case UInt8(ascii: "A"):
            guard let length = r.readUInt32() else { break }
            let contentStart = r.offset
            let content = readClamped(&r, Int(length), base: base, what: "field array \"\(name)\"")
            if depth >= options.effectiveTableDepth {
                reportDepth(at: (base + start)..<(base + r.offset))
                return .array(AMQPFieldArray(skippedBytes: content.count))
            }
            return .array(AMQPFieldArray(items: decodeArray(content, base: base + contentStart, depth: depth + 1)))
        default:
            problems.append(Problem(.error, .unknownFieldType,
                                    "field \"\(name)\" has type \(AMQPText.typeLetter(tag)), which no AMQP 0-9-1 peer defines; the rest of the table cannot be decoded",
                                    reference: "AMQP 0-9-1 §4.2.5.5", range: (base + start)..<(base + start + 1)))
            return nil
        }
        truncated(name, at: base + start, base: base, r)
        return nil
    }

    private mutating func decodeArray(_ content: ArraySlice<UInt8>, base: Int, depth: Int) -> [AMQPFieldArray.Item] {
        var r = ByteReader(content)
        var items: [AMQPFieldArray.Item] = []
        var index = 0
        while !r.isAtEnd {
            let start = r.offset
            let type = r.peekUInt8() ?? 0
            guard let value = readValue(&r, base: base, name: "[\(index)]", depth: depth) else { break }
            items.append(AMQPFieldArray.Item(type: type, value: value, range: (base + start)..<(base + r.offset)))
            index += 1
        }
        return items
    }

    /// Reads `length` bytes, or what is left when the length runs past the end (reported).
    private mutating func readClamped(_ r: inout ByteReader, _ length: Int, base: Int, what: @autoclosure () -> String) -> ArraySlice<UInt8> {
        if length > r.remaining {
            problems.append(Problem(.error, .lengthPastEnd,
                                    "\(what()) claims \(length) bytes but only \(r.remaining) remain",
                                    reference: "AMQP 0-9-1 §4.2.5.5", range: (base + r.offset - 4)..<(base + r.offset)))
            return r.readRest()
        }
        return r.readBytes(length) ?? []
    }

    private mutating func truncated(_ name: String, at offset: Int, base: Int, _ r: ByteReader) {
        problems.append(Problem(.error, .tableTruncated,
                                "field \"\(name)\" runs past the end of its table",
                                reference: "AMQP 0-9-1 §4.2.5.5", range: offset..<(base + r.bytes.count)))
    }

    private mutating func reportDepth(at range: Range<Int>?) {
        guard !reportedDepth else { return }
        reportedDepth = true
        problems.append(Problem(.error, .tableTooDeep,
                                "field tables nest deeper than \(options.effectiveTableDepth) levels; the deeper levels were skipped, not decoded",
                                reference: "AMQP 0-9-1 §4.2.5.5", range: range))
    }
}
