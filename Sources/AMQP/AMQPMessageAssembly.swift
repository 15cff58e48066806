import Dissection

/// One message in flight on a channel in one direction: the content-bearing method, its
/// content header, and its body frames counted against the header's body size
/// (AMQP 0-9-1 §4.2.6). Only a preview of the body is kept, never the body.
package struct AMQPMessageAssembly {
    package enum Stage: Equatable { case awaitingHeader, awaitingBody }

    package var method: AMQPMethodSpec
    /// The method's typed arguments: the state and a table read them by argument
    /// (`arguments.exchange`); a view reads them by their place in the spec (`argumentList`).
    package private(set) var arguments: AMQPMethod
    package var stage = Stage.awaitingHeader
    package var bodySize: UInt64 = 0
    package var received: UInt64 = 0
    /// The content header's property summary, as the connection's view made it.
    package var propertySummary = ""
    /// The typed content header (a reference to its decoder's box): the broker model reads its
    /// `headers`, and the message's view repeats its `properties` object when `showsProperties`.
    package private(set) var header: AMQPContentHeaderDecoder.Result.Typed?
    /// Whether the message's view repeats the header's `properties` object (JSON and the tree; text and
    /// tables show only `propertySummary`).
    package private(set) var showsProperties = false
    /// That object as the header frame's tree showed it (the connection keeps it here: `keepProperties`),
    /// so that a message's view does not make it again (11,000 instructions a header with a few
    /// headers entries). The state never reads it.
    package var keptProperties: Field?
    package var preview: [UInt8] = []
    package var previewLimit: Int
    /// Body bytes the capture or the hold limit kept from the preview.
    package var previewMissing = false
    package var bodyFrames = 0

    /// The frame of the content-bearing method, and its place among the connection's publishes
    /// and deliveries in that frame (`AMQPLinks`).
    package var frame = 0
    package var place = 0

    package init(method: AMQPMethodSpec, arguments: AMQPMethod, previewLimit: Int, frame: Int = 0, place: Int = 0) {
        self.method = method
        self.arguments = arguments
        self.previewLimit = max(previewLimit, 0)
        self.frame = frame
        self.place = place
    }

    /// A completed basic.publish as the broker model reads it: where it goes, what routes it
    /// (its `headers` when the header was kept), where it was published.
    package var publishEvent: AMQPBrokerEvent.Publish? {
        guard method.classID == 60, method.methodID == 40 else { return nil }
        return AMQPBrokerEvent.Publish(exchange: arguments.exchange ?? "", routingKey: arguments.routingKey ?? "",
                                       mandatory: arguments.mandatory ?? false,
                                       headers: header?.header.properties.headers?.value, frame: frame, place: place)
    }

    /// Whether a content header is of the method's class (AMQP 0-9-1 §4.2.6.1; a header that
    /// names none is not judged).
    package func isOfMethodClass(_ header: AMQPContentHeaderDecoder.Result) -> Bool {
        header.classID.map { $0 == method.classID } ?? true
    }

    /// Takes the content header: its body size and properties; body frames come next. With
    /// `keepingProperties`, the typed header is kept for the `properties` of the message's view.
    package mutating func take(header: AMQPContentHeaderDecoder.Result, keepingProperties: Bool) {
        bodySize = header.bodySize ?? 0
        propertySummary = header.propertySummary
        self.header = header.typed
        showsProperties = keepingProperties
        stage = .awaitingBody
    }

    /// Keeps the `properties` field of `header`'s frame, as its view made it, for the message's
    /// view; nothing unless `header` is the one this message took.
    package mutating func keepProperties(_ field: Field, of header: AMQPContentHeaderDecoder.Result) {
        guard showsProperties, let typed = header.typed, self.header === typed else { return }
        keptProperties = field
    }

    /// Counts a body frame; keeps the part of it the preview still has room for.
    package mutating func add(body frame: AMQPRawFrame) {
        bodyFrames += 1
        received &+= UInt64(frame.size)
        let room = previewLimit - preview.count
        guard room > 0 else { return }
        if previewMissing { return }
        preview.append(contentsOf: frame.payload.prefix(room))
        if !frame.isWhole, frame.payload.count < room { previewMissing = true }
    }

    package var isComplete: Bool { stage == .awaitingBody && received >= bodySize }

    /// What is missing, in words, for a message cut short.
    package var progress: String {
        switch stage {
        case .awaitingHeader: return "its content header never came"
        case .awaitingBody: return "\(received) of \(bodySize) body bytes came"
        }
    }

    /// The method arguments a message view repeats, by spec name, in the order it shows them.
    /// Each method keeps where its own are (`AMQPMethodSpec.messageArguments`).
    package static let routingArguments = ["exchange", "routing-key", "consumer-tag", "delivery-tag", "redelivered",
                                   "reply-code", "reply-text", "message-count"]

    /// What summaries count of the message: the same values its view shows.
    package var facts: PDUFacts.MessageFacts {
        PDUFacts.MessageFacts(method: method.fullName, exchange: arguments.exchange, routingKey: arguments.routingKey,
                              bodySize: bodySize <= UInt64(Int.max) ? Int(bodySize) : nil)
    }
}
