import AMQP
import Dissection

/// The `message` field of the frame that completed a message: a view of its assembly.
extension AMQPMessageAssembly {
    private static func dropRanges(_ field: inout Field) {
        field.range = nil
        for i in field.children.indices { dropRanges(&field.children[i]) }
    }

    /// The content header's `properties` field as its frame shows it, JSON only and without
    /// byte ranges (they were the header frame's); nil when the header was not kept or has no
    /// properties. The header's problems were reported on the header frame. The header frame's
    /// own when kept; made here for a message its header frame completes (no body).
    /// For JSON alone (`PDUDetail.json`) it is the object already written, as a `.json` value: the
    /// same bytes, without a copy of the tree with its ranges cleared (that copy, its writing and
    /// its freeing cost about 3,200 instructions a message: callgrind, bench JSON).
    private func propertiesField(options: AMQPOptions) -> Field? {
        guard showsProperties else { return nil }
        guard let properties = keptProperties ?? header?.header.propertiesField(options: options) else { return nil }
        guard options.detail == .json else { return Self.repeated(properties) }
        // The header frame's object as it wrote it (the same bytes, shared), or written here.
        return AMQPContentHeader.written(properties, range: nil, jsonOnly: true)
    }

    /// A header frame's `properties` field as a message repeats it. Its ranges are cleared even
    /// where JSON alone is printed (which shows none): every range a PDU's fields carry lies in
    /// that PDU's bytes (`FuzzPDUCheck`), and these were the header frame's.
    private static func repeated(_ field: Field) -> Field {
        var properties = field
        dropRanges(&properties)
        properties.jsonOnly = true
        return properties
    }

    /// The `message` field: the method's routing, the properties, and the body preview. The
    /// properties are a line of `propertySummary` in text and, when the header's were kept, the
    /// header's `properties` object in JSON.
    func field(options: AMQPOptions) -> Field {
        var children: [Field] = []
        children.reserveCapacity(method.messageArguments.count + 6)
        children.append(Field("method", "Method", .string(method.fullName)))
        // The typed method's arguments, read by their place in the spec (argument i is the
        // spec's i-th): by name, through a list of values made per message, it cost about 2,700
        // instructions a message (callgrind, bench JSON).
        let list = arguments.argumentList
        for index in method.messageArguments where index < list.count {
            let (key, label) = (method.arguments[index].key, method.arguments[index].label)
            switch AMQPArgumentValue(list[index]) {
            case .string(let s): children.append(Field(key, label, .string(s)))
            case .int(let v): children.append(Field(key, label, .int(v)))
            case .bool(let b): children.append(Field(key, label, .bool(b)))
            default: continue
            }
        }
        if !propertySummary.isEmpty {
            children.append(Field("properties", "Properties", .string(propertySummary), textOnly: true))
        }
        if let properties = propertiesField(options: options) { children.append(properties) }
        children.append(Field("body_size", "Body size", bodySize <= UInt64(Int.max) ? .int(Int(bodySize)) : .string(String(bodySize))))
        let length = Int(clamping: bodySize)
        children.append(Field("body", "Body", Preview.value(of: preview[...], length: length, limit: previewLimit)))
        children.append(Field("body_frames", "Body frames", .int(bodyFrames)))
        if previewMissing {
            children.append(Field("body_preview_incomplete", "Body preview incomplete", .bool(true)))
        }
        return Field("message", "Message", children: children)
    }
}
