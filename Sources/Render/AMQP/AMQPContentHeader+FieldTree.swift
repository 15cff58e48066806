import AMQP
import Dissection
import Render

/// The field tree and property summary of a content header: a view of `AMQPContentHeader`,
/// deciding nothing about the bytes (the decoder found the problems).
extension AMQPContentHeader {
    /// Appends the header's fields to a frame's: class, weight, body size, the property flags
    /// (each flag a text-only line) and the properties read.
    func appendFields(to fields: inout [Field], options: AMQPOptions) {
        guard let classID, let weight, let bodySize else { return }
        let textLines = options.textLines
        fields.append(Field("class_id", "Class", .int(Int(classID.value)), line: textLines ? AMQPTextLines.classID(classID.value) : nil,
                            range: classID.range))
        fields.append(Field("weight", "Weight", .int(Int(weight.value)), range: weight.range))
        fields.append(Field("body_size", "Body-Size",
                            bodySize.value <= UInt64(Int.max) ? .int(Int(bodySize.value)) : .string(String(bodySize.value)),
                            range: bodySize.range))
        guard let propertyFlags else { return }
        let flags = propertyFlags.value
        let properties = AMQPSpec.properties(classID: classID.value) ?? []
        var flagField = Field("property_flags", "Property flags", .int(Int(flags.word(0))),
                              line: textLines ? "Property flags: \(AMQPHex.string(UInt64(flags.word(0)), digits: 4))" : nil,
                              range: propertyFlags.range)
        // The flag bits are text-only lines: not made when no text tree is printed.
        if textLines {
            let lines = AMQPTextLines.flagLines(classID: classID.value, properties: properties)
            flagField.children.reserveCapacity(min(properties.count, flags.count) + 1)
            for (i, prop) in properties.enumerated() where i < flags.count {
                flagField.children.append(Field(lines[i].key, prop.label, .bool(flags[i]),
                                                line: flags[i] ? lines[i].present : lines[i].absent, textOnly: true))
            }
        }
        if flags.wordCount > 1 {
            let words = flags.words
            flagField.children.append(Field("property_flags_more", "More property flags",
                                            .string(words.dropFirst().map { AMQPHex.string(UInt64($0), digits: 4) }.joined(separator: " "))))
        }
        fields.append(flagField)
        guard let properties = propertiesField(options: options) else { return }
        // For JSON alone, the object written once: the message this header belongs to repeats
        // the same bytes (`AMQPMessageAssembly.field`), not written again.
        fields.append(options.detail == .json ? Self.written(properties, range: properties.range) : properties)
    }

    /// The `properties` field with its object written as JSON (a `.json` value, no children), for
    /// JSON alone: written once, its bytes can be repeated as they are. Properties carry no
    /// credential: no secret to hide or show.
    static func written(_ properties: Field, range: Range<Int>?, jsonOnly: Bool = false) -> Field {
        if case .json = properties.value { return Field("properties", properties.label, properties.value, range: range, jsonOnly: jsonOnly) }
        var json = ByteSink(capacity: 256)
        JSONTree.writeObject(properties.children, showSecrets: false, into: &json)
        return Field("properties", properties.label, .json(Array(json.bytes)), range: range, jsonOnly: jsonOnly)
    }

    /// The text lines of delivery modes 1 and 2, made once (nearly every message has one).
    static let deliveryModeLines: [String] = {
        let label = AMQPSpec.properties(classID: 60)?.first { $0.name == "delivery-mode" }?.label ?? "Delivery-Mode"
        return ["\(label): 1 (non-persistent)", "\(label): 2 (persistent)"]
    }()

    /// The `properties` field: each property present, by the class's property order; nil when
    /// none is present.
    func propertiesField(options: AMQPOptions) -> Field? {
        guard let classID, let propertyFlags, let propertiesRange else { return nil }
        let flags = propertyFlags.value
        let properties = AMQPSpec.properties(classID: classID.value) ?? []
        var propertyFields: [Field] = []
        propertyFields.reserveCapacity(flags.setCount)
        // The values read once: `self.properties` in the loop copied all of them (456 bytes)
        // for each property present.
        let values = self.properties
        for (i, prop) in properties.enumerated() where flags.isSet(i) {
            guard let property = values.property(at: i) else { break }
            // Only the delivery mode's field is changed after it is made (a field changed is
            // copied into the array, one made in the append is moved).
            if options.textLines, prop.name == "delivery-mode", case .octet(let mode) = property {
                var field = property.field(prop, bitLines: nil, depthLimit: options.effectiveTableDepth, textLines: options.textLines)
                field.line = mode.value == 1 || mode.value == 2 ? AMQPContentHeader.deliveryModeLines[Int(mode.value) - 1]
                    : "\(prop.label): \(mode.value)"
                propertyFields.append(field)
            } else {
                propertyFields.append(property.field(prop, bitLines: nil, depthLimit: options.effectiveTableDepth, textLines: options.textLines))
            }
        }
        guard !propertyFields.isEmpty else { return nil }
        return Field("properties", "Properties", range: propertiesRange, children: propertyFields)
    }

    /// The properties people look for first, as `name=value` pairs: strings, numbers, times and
    /// the number of a table's entries (`content-type=text/plain delivery-mode=2 headers=3`).
    var propertySummary: String {
        guard let classID, let propertyFlags else { return "" }
        let flags = propertyFlags.value
        let properties = AMQPSpec.properties(classID: classID.value) ?? []
        var line = ByteSink(capacity: 128)
        var first = true
        let values = self.properties
        for (i, prop) in properties.enumerated() where flags.isSet(i) {
            guard let property = values.property(at: i) else { break }
            switch property {
            case .shortString, .octet, .short, .long, .longlong, .timestamp, .table: break
            case .longString, .bit: continue
            }
            if !first { line.literal(" ") }
            first = false
            line.append(prop.name)
            line.literal("=")
            switch property {
            case .shortString(let s): line.append(AMQPText.summaryValue(s.value, limit: 40))
            case .timestamp(let t): AMQPText.appendUTCTime(UInt64(Int(clamping: t.value)), into: &line)
            case .octet(let v): line.append(Int(v.value))
            case .short(let v): line.append(Int(v.value))
            case .long(let v): line.append(Int(v.value))
            case .longlong(let v): line.append(Int(clamping: v.value))
            case .table(let table): line.append(table.value.entries.count)
            case .longString, .bit: break
            }
        }
        return line.take()
    }
}
