import Dissection

/// Decodes a content header frame's payload (AMQP 0-9-1 §4.2.6.1): class id, weight, body
/// size, property flags (continued while bit 0 of a flags word is set) and the properties
/// those flags say are present, in the class's property order.
struct AMQPContentHeaderDecoder {
    struct Result {
        var classID: UInt16?
        var bodySize: UInt64?
        var properties = AMQPArgumentValues()
        var problems: [Problem] = []
        /// `content-type=text/plain delivery-mode=2`.
        var propertySummary = ""
    }

    let options: AMQPOptions

    /// The fields are appended to `fields` (the frame's).
    func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool, into fields: inout [Field]) -> Result {
        var result = Result()
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let weight = r.readUInt16(), let bodySize = r.readUInt64() else {
            result.problems.append(short(isWhole, "content header too short for class id, weight and body size",
                                         range: 7..<(7 + payload.count)))
            return result
        }
        result.classID = classID
        result.bodySize = bodySize
        fields.append(Field("class_id", "Class", .int(Int(classID)),
                                   line: AMQPTextLines.classID(classID),
                                   range: 7..<9))
        fields.append(Field("weight", "Weight", .int(Int(weight)), range: 9..<11))
        if weight != 0 {
            result.problems.append(Problem(.warning, "weight-not-zero", "the weight field is unused and must be zero",
                                           reference: "AMQP 0-9-1 §4.2.6.1", range: 9..<11))
        }
        fields.append(Field("body_size", "Body-Size",
                                   bodySize <= UInt64(Int.max) ? .int(Int(bodySize)) : .string(String(bodySize)),
                                   range: 11..<19))

        // Property flags: 15 presence bits per word, most significant first; bit 0 continues.
        // Flag i is bit 15 - i % 15 of word i / 15; almost always there is one word.
        var words: [UInt16] = []
        words.reserveCapacity(1)
        let flagsStart = r.offset
        while true {
            guard let word = r.readUInt16() else {
                result.problems.append(short(isWhole, "content header ends inside its property flags",
                                             range: (7 + flagsStart)..<(7 + payload.count)))
                return result
            }
            words.append(word)
            if word & 1 == 0 { break }
            // No class defines more than 15 properties; a run of continuation words is noise.
            if words.count >= 4 {
                result.problems.append(Problem(.error, "property-flags-run",
                                               "property flags continue for more than 4 words",
                                               reference: "AMQP 0-9-1 §4.2.6.1", range: (7 + flagsStart)..<(7 + r.offset)))
                return result
            }
        }
        let flags = PropertyFlags(words: words)
        let cls = AMQPSpec.class(id: classID)
        let properties = cls?.properties ?? []
        var flagField = Field("property_flags", "Property flags", .int(Int(words[0])),
                              line: "Property flags: \(AMQPHex.string(UInt64(words[0]), digits: 4))",
                              range: (7 + flagsStart)..<(7 + r.offset))
        let lines = AMQPContentHeaderDecoder.flagLines(classID: classID, properties: properties)
        // The flag bits are text-only lines: not made when no text tree is printed.
        if Field.buildsTextLines { flagField.children.reserveCapacity(min(properties.count, flags.count) + 1) }
        for (i, prop) in properties.enumerated() where i < flags.count && Field.buildsTextLines {
            flagField.children.append(Field(lines[i].key, prop.label, .bool(flags[i]),
                                            line: flags[i] ? lines[i].present : lines[i].absent, textOnly: true))
        }
        if words.count > 1 {
            flagField.children.append(Field("property_flags_more", "More property flags",
                                            .string(words.dropFirst().map { AMQPHex.string(UInt64($0), digits: 4) }.joined(separator: " "))))
        }
        fields.append(flagField)

        if let undefined = (properties.count..<max(properties.count, flags.count)).first(where: { flags[$0] }) {
            result.problems.append(Problem(.error, "undefined-property",
                                           "property flag \(undefined + 1) is set, but \(cls?.name ?? "class \(classID)") defines only \(properties.count) properties; the properties cannot be decoded past it",
                                           reference: "AMQP 0-9-1 §4.2.6.1", range: flagField.range))
        }

        let propertiesStart = 7 + r.offset
        var reader = AMQPArgumentReader(r.readRest(), base: propertiesStart, options: options)
        reader.values.reserve(flags.setCount)
        var propertyFields: [Field] = []
        propertyFields.reserveCapacity(flags.setCount)
        var complete = true
        for (i, prop) in properties.enumerated() where i < flags.count && flags[i] {
            guard var field = reader.read(prop) else {
                reader.problems.append(short(isWhole, "content header ends before its \(prop.name) property",
                                             range: (reader.base + reader.reader.offset)..<(7 + payload.count)))
                complete = false
                break
            }
            if Field.buildsTextLines, prop.name == "delivery-mode", let mode = reader.values.int("delivery-mode") {
                let meaning = mode == 1 ? " (non-persistent)" : mode == 2 ? " (persistent)" : ""
                field.line = "\(prop.label): \(mode)\(meaning)"
            }
            propertyFields.append(field)
        }
        let undefinedSet = (properties.count..<max(properties.count, flags.count)).contains { flags[$0] }
        if complete, isWhole, !undefinedSet, reader.reader.remaining > 0 {
            let left = reader.reader.remaining
            let at = reader.base + reader.reader.offset
            reader.problems.append(Problem(.error, "trailing-bytes", "\(left) bytes left over after the last property",
                                           reference: "AMQP 0-9-1 §4.2.6.1", range: at..<(at + left)))
        }
        if !propertyFields.isEmpty {
            fields.append(Field("properties", "Properties",
                                       range: reader.base..<(reader.base + reader.reader.offset), children: propertyFields))
        }
        result.properties = reader.values
        result.problems += reader.problems
        result.propertySummary = AMQPContentHeaderDecoder.summary(reader.values)
        return result
    }

    /// The presence bits of the property flag words, by property index.
    struct PropertyFlags {
        let words: [UInt16]
        var count: Int { words.count * 15 }
        subscript(i: Int) -> Bool { words[i / 15] >> UInt16(15 - i % 15) & 1 == 1 }
        /// How many properties are flagged present.
        var setCount: Int { words.reduce(0) { $0 + ($1 & 0xFFFE).nonzeroBitCount } }
    }

    /// The text lines of the property flag bits, `1... .... .... .... = Content-Type: present`,
    /// made once per class: they are the same for every content header.
    private static let basicFlagLines = makeFlagLines(AMQPSpec.class(id: 60)?.properties ?? [])

    static func flagLines(classID: UInt16, properties: [AMQPArgumentSpec]) -> [(key: String, present: String, absent: String)] {
        classID == 60 ? basicFlagLines : makeFlagLines(properties)
    }

    private static func makeFlagLines(_ properties: [AMQPArgumentSpec]) -> [(key: String, present: String, absent: String)] {
        properties.enumerated().map { i, prop in
            func line(_ set: Bool) -> String {
                var mask = Array(repeating: Character("."), count: 16)
                mask[i % 15] = set ? "1" : "0"
                let text = String(mask[0..<4]) + " " + String(mask[4..<8]) + " " + String(mask[8..<12]) + " " + String(mask[12..<16])
                return "\(text) = \(prop.label): \(set ? "present" : "absent")"
            }
            return ("flag_" + prop.key, line(true), line(false))
        }
    }

    /// The properties people look for first, as `name=value` pairs.
    static func summary(_ values: AMQPArgumentValues) -> String {
        var line = ByteSink(capacity: 128)
        var first = true
        for entry in values.entries {
            let prop = entry.spec, value = entry.value
            switch value {
            case .string, .int, .table: break
            default: continue
            }
            if !first { line.literal(" ") }
            first = false
            line.append(prop.name)
            line.literal("=")
            switch value {
            case .string(let s): line.append(AMQPText.summaryValue(s, limit: 40))
            case .int(let v) where prop.type == .timestamp: line.append(AMQPText.utcTime(UInt64(max(v, 0))))
            case .int(let v): line.append(v)
            case .table(let table): line.append(table.children.count)
            default: break
            }
        }
        return line.take()
    }

    private func short(_ isWhole: Bool, _ what: String, range: Range<Int>) -> Problem {
        if isWhole {
            return Problem(.error, "header-truncated", what, reference: "AMQP 0-9-1 §4.2.6.1", range: range)
        }
        return Problem(.warning, "not-captured", "\(what): the rest of the frame was not captured or not held", range: range)
    }
}
