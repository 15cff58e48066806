import Dissection

/// One message in flight on a channel in one direction: the content-bearing method, its
/// content header, and its body frames counted against the header's body size
/// (AMQP 0-9-1 §4.2.6). Only a preview of the body is kept, never the body.
struct AMQPMessageAssembly {
    enum Stage: Equatable { case awaitingHeader, awaitingBody }

    var method: AMQPMethodSpec
    /// The method's arguments by spec name.
    private var methodValues: AMQPArgumentValues
    var stage = Stage.awaitingHeader
    var bodySize: UInt64 = 0
    var received: UInt64 = 0
    /// The content header's property summary, as its decoder made it.
    var propertySummary = ""
    /// The typed content header (a reference to its decoder's box): the broker model reads its
    /// `headers`, and `field()` repeats its `properties` object when `showsProperties`.
    private var header: AMQPContentHeaderDecoder.Result.Typed?
    /// Whether `field()` repeats the header's `properties` object (JSON and the tree; text and
    /// tables show only `propertySummary`).
    private var showsProperties = false
    /// That object as the header frame's tree showed it (`keepProperties`), so that a message's
    /// view does not make it again (11,000 instructions a header with a few headers entries).
    private var keptProperties: Field?
    var preview: [UInt8] = []
    var previewLimit: Int
    /// Body bytes the capture or the hold limit kept from the preview.
    var previewMissing = false
    var bodyFrames = 0

    /// The frame of the content-bearing method, and its place among the connection's publishes
    /// and deliveries in that frame (`AMQPLinks`).
    var frame = 0
    var place = 0

    init(method: AMQPMethodSpec, values: AMQPArgumentValues, previewLimit: Int, frame: Int = 0, place: Int = 0) {
        self.method = method
        self.methodValues = values
        self.previewLimit = max(previewLimit, 0)
        self.frame = frame
        self.place = place
    }

    /// A completed basic.publish as the broker model reads it: where it goes, what routes it
    /// (its `headers` when the header was kept), where it was published.
    var publishEvent: AMQPBrokerEvent.Publish? {
        guard method.classID == 60, method.methodID == 40 else { return nil }
        return AMQPBrokerEvent.Publish(exchange: methodValues.string("exchange") ?? "", routingKey: methodValues.string("routing-key") ?? "",
                                       mandatory: methodValues.bool("mandatory") ?? false,
                                       headers: header?.header.properties.headers?.value, frame: frame, place: place)
    }

    /// Whether a content header is of the method's class (AMQP 0-9-1 §4.2.6.1; a header that
    /// names none is not judged).
    func isOfMethodClass(_ header: AMQPContentHeaderDecoder.Result) -> Bool {
        header.classID.map { $0 == method.classID } ?? true
    }

    /// Takes the content header: its body size and properties; body frames come next. With
    /// `keepingProperties`, the typed header is kept for the `properties` of `field(options:)`.
    mutating func take(header: AMQPContentHeaderDecoder.Result, keepingProperties: Bool) {
        bodySize = header.bodySize ?? 0
        propertySummary = header.propertySummary
        self.header = header.typed
        showsProperties = keepingProperties
        stage = .awaitingBody
    }

    private static func dropRanges(_ field: inout Field) {
        field.range = nil
        for i in field.children.indices { dropRanges(&field.children[i]) }
    }

    /// Keeps the `properties` field of `header`'s frame, as its tree made it, for `field()`;
    /// nothing unless `header` is the one this message took.
    mutating func keepProperties(_ field: Field, of header: AMQPContentHeaderDecoder.Result) {
        guard showsProperties, let typed = header.typed, self.header === typed else { return }
        keptProperties = Self.repeated(field)
    }

    /// The content header's `properties` field as its frame shows it, JSON only and without
    /// byte ranges (they were the header frame's); nil when the header was not kept or has no
    /// properties. The header's problems were reported on the header frame. The header frame's
    /// own when kept; made here for a message its header frame completes (no body).
    private func propertiesField(options: AMQPOptions) -> Field? {
        guard showsProperties else { return nil }
        if let keptProperties { return keptProperties }
        return header?.header.propertiesField(options: options).map(Self.repeated)
    }

    /// A header frame's `properties` field as a message repeats it.
    private static func repeated(_ field: Field) -> Field {
        var properties = field
        dropRanges(&properties)
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
