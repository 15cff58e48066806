import Dissection

/// One message in flight on a channel in one direction: the content-bearing method, its
/// content header, and its body frames counted against the header's body size
/// (AMQP 0-9-1 §4.2.6). Only a preview of the body is kept, never the body.
struct AMQPMessageAssembly {
    enum Stage: Equatable { case awaitingHeader, awaitingBody }

    var method: AMQPMethodSpec
    /// The method's values, as the full decoder and the written paths read them (empty when
    /// `arguments` holds them).
    private var methodValues: AMQPArgumentValues
    /// The method's arguments as the counted path read them, typed (no list made).
    private var arguments: AMQPFrequentArguments?
    var stage = Stage.awaitingHeader
    var bodySize: UInt64 = 0
    var received: UInt64 = 0
    var propertySummary = ""
    /// The content header's `properties` as the header frame showed them, kept when the
    /// message's `field()` will be shown as JSON (the same object again). Not kept for text and
    /// tables, which show only `propertySummary`.
    private var headerProperties: KeptProperties?

    /// A header's `properties`, as kept for its message.
    enum KeptProperties {
        /// The JSON object the header frame's written JSON holds (a copy of its bytes).
        case json([UInt8])
        /// The header frame's field, its byte ranges dropped (they were the header's).
        case field(Field)
        /// The header has no properties.
        case none
    }
    var preview: [UInt8] = []
    var previewLimit: Int
    /// Body bytes the capture or the hold limit kept from the preview.
    var previewMissing = false
    var bodyFrames = 0

    init(method: AMQPMethodSpec, values: AMQPArgumentValues, previewLimit: Int) {
        self.method = method
        self.methodValues = values
        self.previewLimit = max(previewLimit, 0)
    }

    /// A message whose method the counted path read (`arguments` are of `method`).
    init(method: AMQPMethodSpec, arguments: AMQPFrequentArguments, previewLimit: Int) {
        self.method = method
        self.methodValues = AMQPArgumentValues()
        self.arguments = arguments
        self.previewLimit = max(previewLimit, 0)
    }

    /// Whether a content header is of the method's class (AMQP 0-9-1 §4.2.6.1; a header that
    /// names none is not judged).
    func isOfMethodClass(_ header: AMQPContentHeaderDecoder.Result) -> Bool {
        header.classID.map { $0 == method.classID } ?? true
    }

    /// Takes the content header: its body size and properties; body frames come next.
    /// `properties`, what the header frame showed of its properties, is kept for
    /// `field(options:)` when given.
    mutating func take(header: AMQPContentHeaderDecoder.Result, properties: KeptProperties? = nil) {
        bodySize = header.bodySize ?? 0
        propertySummary = header.propertySummary
        headerProperties = properties
        stage = .awaitingBody
    }

    /// What a message keeps of its header frame's `properties` (`pdu`, that frame's PDU, as the
    /// JSON and tree details make it): the object its written JSON holds, or its field.
    static func keptProperties(of pdu: DissectedPDU) -> KeptProperties {
        if pdu.hasJSONTree {
            return pdu.withJSONTreeBytes { bytes -> KeptProperties in
                // A written header's object ends with its `properties` member, when it has one:
                // the first such key, as the members before it are numbers.
                let key = Array(",\"properties\":".utf8)
                guard bytes.count > key.count + 1 else { return .none }
                for start in 0...(bytes.count - key.count - 1) where bytes[start] == key[0] {
                    guard bytes[start..<(start + key.count)].elementsEqual(key) else { continue }
                    // Up to the frame object's closing brace.
                    return .json(Array(bytes[(start + key.count)..<(bytes.count - 1)]))
                }
                return .none
            }
        }
        guard var properties = pdu.fields.first(where: { $0.key == "properties" }) else { return .none }
        dropRanges(&properties)
        return .field(properties)
    }

    private static func dropRanges(_ field: inout Field) {
        field.range = nil
        for i in field.children.indices { dropRanges(&field.children[i]) }
    }

    /// The content header's `properties` field, JSON only and without byte ranges (they were the
    /// header frame's), from what was kept of it; nil when nothing was kept or it has none. The
    /// header's problems were reported on the header frame.
    private func propertiesField() -> Field? {
        var properties: Field
        switch headerProperties {
        case nil, .none?:
            return nil
        case .json(let bytes)?:
            properties = Field("properties", "Properties", .json(bytes))
        case .field(let field)?:
            properties = field
        }
        properties.jsonOnly = true
        return properties
    }

    /// Counts a body frame; keeps the part of it the preview still has room for.
    mutating func add(body frame: AMQPRawFrame) {
        bodyFrames += 1
        received &+= UInt64(frame.size)
        let room = previewLimit - preview.count
        guard room > 0 else { return }
        if previewMissing { return }
        preview.append(contentsOf: frame.payload.prefix(room))
        if !frame.isWhole, frame.payload.count < room { previewMissing = true }
    }

    var isComplete: Bool { stage == .awaitingBody && received >= bodySize }

    /// What is missing, in words, for a message cut short.
    var progress: String {
        switch stage {
        case .awaitingHeader: return "its content header never came"
        case .awaitingBody: return "\(received) of \(bodySize) body bytes came"
        }
    }

    /// The method arguments a message view repeats, by spec name, in the order it shows them.
    /// Each method keeps where its own are (`AMQPMethodSpec.messageArguments`).
    static let routingArguments = ["exchange", "routing-key", "consumer-tag", "delivery-tag", "redelivered",
                                   "reply-code", "reply-text", "message-count"]

    /// The value of the method's argument at `index` (of `method.arguments`): read at that
    /// index, where a whole method's values are, else looked up by name.
    private func methodValue(at index: Int) -> AMQPArgumentValue? {
        if let arguments { return arguments.value(at: index) }
        let entries = methodValues.entries
        if index < entries.count, entries[index].spec === method.arguments[index] { return entries[index].value }
        return methodValues[method.arguments[index].name]
    }

    /// What summaries count of the message: the same values `field()` shows.
    var facts: PDUFacts.MessageFacts {
        PDUFacts.MessageFacts(method: method.fullName, exchange: methodString(at: method.exchangeArgument),
                              routingKey: methodString(at: method.routingKeyArgument),
                              bodySize: bodySize <= UInt64(Int.max) ? Int(bodySize) : nil)
    }

    /// The string value of the method's argument at `index`, as `AMQPArgumentValues.string` gives it.
    private func methodString(at index: Int?) -> String? {
        guard let index else { return nil }
        return methodValue(at: index)?.stringValue
    }

    /// The `message` field's text lines, as `TextTree` writes `field()` one level down,
    /// written without making the field (the text fast path, `PDUDetail.text`).
    func writeText(into out: inout ByteSink, style: TextTree.Style) {
        out.literal("    Message\n        Method: ")
        out.append(method.fullName)
        out.literal("\n")
        for index in method.messageArguments {
            guard let value = methodValue(at: index) else { continue }
            let label = method.arguments[index].label
            switch value {
            case .string(let s):
                out.literal("        ")
                out.append(label)
                out.literal(": ")
                out.append(s.isEmpty ? "\"\"" : s)
            case .int(let v):
                out.literal("        ")
                out.append(label)
                out.literal(": ")
                out.append(v)
            case .bool(let b):
                out.literal("        ")
                out.append(label)
                out.literal(b ? ": True" : ": False")
            default:
                continue
            }
            out.literal("\n")
        }
        if !propertySummary.isEmpty {
            out.literal("        Properties: ")
            out.append(propertySummary)
            out.literal("\n")
        }
        out.literal("        Body size: ")
        if bodySize <= UInt64(Int.max) { out.append(Int(bodySize)) } else { out.append(String(bodySize)) }
        out.literal("\n        Body")
        preview.withUnsafeBufferPointer {
            TextTree.writePreview(of: $0, length: Int(clamping: bodySize), limit: previewLimit, style: style, into: &out)
        }
        out.literal("\n        Body frames: ")
        out.append(bodyFrames)
        out.literal("\n")
        if previewMissing { out.literal("        Body preview incomplete: True\n") }
    }

    /// The `message` field: the method's routing, the properties, and the body preview. The
    /// properties are a line of `propertySummary` in text and, when the header's were kept, the
    /// header's `properties` object in JSON.
    func field(options: AMQPOptions) -> Field {
        var children: [Field] = []
        children.reserveCapacity(method.messageArguments.count + 6)
        children.append(Field("method", "Method", .string(method.fullName)))
        for index in method.messageArguments {
            guard let value = methodValue(at: index) else { continue }
            let (key, label) = (method.arguments[index].key, method.arguments[index].label)
            switch value {
            case .string(let s): children.append(Field(key, label, .string(s)))
            case .int(let v): children.append(Field(key, label, .int(v)))
            case .bool(let b): children.append(Field(key, label, .bool(b)))
            default: continue
            }
        }
        if !propertySummary.isEmpty {
            children.append(Field("properties", "Properties", .string(propertySummary), textOnly: true))
        }
        if let properties = propertiesField() { children.append(properties) }
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
