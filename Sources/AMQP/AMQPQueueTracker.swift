import Dissection

/// Follows which queue each delivery comes from, so that deliveries and the client's
/// acknowledgements can be counted per queue although neither names it on the wire.
///
/// - basic.deliver carries a consumer tag: basic.consume (or its consume-ok, when the server
///   chose the tag) says which queue the tag consumes from.
/// - basic.get-ok answers the channel's pending basic.get, which names the queue.
/// - basic.ack / basic.nack / basic.reject from the client carry a delivery tag: the delivery
///   with that tag on the channel says which queue.
///
/// Consumer tags and delivery tags are scoped to a channel (AMQP 0-9-1 domain delivery-tag:
/// "the delivery tag is valid only within the channel from which the message was received"),
/// so all state is per channel and forgotten when the channel opens or closes.
struct AMQPQueueTracker {
    /// Where deliveries come from: a consumer's or a basic.get's queue, and whether the
    /// client acknowledges them.
    private struct Source {
        var queue: String
        var noAck: Bool
    }

    private struct ChannelState {
        /// AMQP 0-9-1 queue.declare-ok / basic.consume queue: an empty queue name in later
        /// methods means the channel's last declared queue.
        var lastDeclaredQueue: String?
        var consumers: [String: Source] = [:]
        /// The basic.consume waiting for its consume-ok (the server may choose the tag).
        var pendingConsume: Source?
        /// The basic.get waiting for get-ok or get-empty.
        var pendingGet: Source?
        /// Deliveries not yet acknowledged, by delivery tag.
        var outstanding: [Int: String] = [:]
    }

    /// Most outstanding deliveries remembered per channel; beyond it new ones are not
    /// attributed (a consumer with no prefetch limit that never acks would grow it forever).
    let maxOutstanding: Int
    /// Each channel's state, in a short list searched from the last one used (a connection uses
    /// a few channels; a dictionary hashed the number per frame).
    private var channelNumbers: [UInt16] = []
    private var channelStates: [ChannelState] = []
    private var lastChannel = 0

    init(maxOutstanding: Int) {
        self.maxOutstanding = max(maxOutstanding, 0)
    }

    /// Forgets a channel's consumers and deliveries (channel.open, channel.close-ok).
    mutating func reset(channel: UInt16) {
        guard let i = channelNumbers.firstIndex(of: channel) else { return }
        channelNumbers.remove(at: i)
        channelStates.remove(at: i)
        lastChannel = 0
    }

    /// Where `channel`'s state is, made empty if it has none.
    private mutating func slot(_ channel: UInt16) -> Int {
        if lastChannel < channelNumbers.count, channelNumbers[lastChannel] == channel { return lastChannel }
        if let i = channelNumbers.firstIndex(of: channel) {
            lastChannel = i
            return i
        }
        channelNumbers.append(channel)
        channelStates.append(ChannelState())
        lastChannel = channelNumbers.count - 1
        return lastChannel
    }

    /// What a method from a direction does to a channel's queue state; nil for the rest (most
    /// frames, publishes and content, look up no channel).
    private enum Step {
        case declareOk, consume, consumeOk, cancel, deliver, get, getEmpty, getOk, settle, recover

        init?(_ id: AMQPMethodID, from direction: Direction) {
            switch (id.classID, id.methodID, direction) {
            case (50, 11, .toClient): self = .declareOk // queue.declare-ok
            case (60, 20, .toServer): self = .consume // basic.consume
            case (60, 21, .toClient): self = .consumeOk // basic.consume-ok
            case (60, 31, .toClient), (60, 30, .toClient): self = .cancel // basic.cancel-ok, basic.cancel from the broker
            case (60, 60, .toClient): self = .deliver // basic.deliver
            case (60, 70, .toServer): self = .get // basic.get
            case (60, 72, .toClient): self = .getEmpty // basic.get-empty
            case (60, 71, .toClient): self = .getOk // basic.get-ok
            case (60, 80, .toServer), (60, 120, .toServer), (60, 90, .toServer): self = .settle // basic.ack, basic.nack, basic.reject
            case (60, 100, .toServer), (60, 110, .toServer): self = .recover // basic.recover-async, basic.recover
            default: return nil
            }
        }
    }

    /// What a delivery or a settlement was attributed to: its queue (none when a `multiple`
    /// settlement covered several), how it was found, and for `multiple`, the deliveries covered.
    /// Summaries take the queue and count as they are; trees show them as fields (`fields`).
    struct Attribution {
        enum Source {
            case consume
            case get
            case deliveryTag(Int)
            /// The deliveries a `multiple` settlement covered, all of one queue.
            case covered
        }

        var queue: String?
        var source: Source
        var ackedCount: Int?

        static let ackedCountLabel = "Outstanding deliveries covered (multiple)"

        /// The derived root fields of the PDU: `queue`, and `acked_count` for `multiple`.
        var fields: [Field] {
            var fields: [Field] = []
            if let queue {
                var label = ByteSink(capacity: 48)
                writeQueueLabel(into: &label)
                fields.append(Field("queue", label.take(), .string(queue)))
            }
            if let ackedCount { fields.append(Field("acked_count", Self.ackedCountLabel, .int(ackedCount))) }
            return fields
        }

        /// `Queue (from basic.consume)` and the like, written as bytes (interpolating a delivery
        /// tag into a String cost several times as much).
        private func writeQueueLabel(into out: inout ByteSink) {
            switch source {
            case .consume: out.literal("Queue (from basic.consume)")
            case .get: out.literal("Queue (from basic.get)")
            case .covered: out.literal("Queue (from the deliveries it covers)")
            case .deliveryTag(let tag):
                out.literal("Queue (from delivery-tag ")
                out.append(tag)
                out.literal(")")
            }
        }
    }

    /// Notes what a method says about queues and returns what it attributes the PDU to, if anything.
    mutating func track(_ id: AMQPMethodID, _ values: AMQPArgumentValues, channel: UInt16, from direction: Direction) -> Attribution? {
        // Only these methods concern queues: others need no channel state.
        guard let step = Step(id, from: direction) else { return nil }
        let i = slot(channel)
        // Changed where it is stored: a copy would share, then copy, its dictionaries per frame.
        // The steps are static: a method of `self` called with `self.channelStates` in-out
        // would be called on a copy of `self`, which shares the array, so the in-out access
        // copied it per frame.
        return Self.track(step, values, maxOutstanding: maxOutstanding, &channelStates[i])
    }

    private static func track(_ step: Step, _ values: AMQPArgumentValues, maxOutstanding: Int,
                              _ state: inout ChannelState) -> Attribution? {
        switch step {
        case .declareOk:
            if let queue = values.string("queue") { state.lastDeclaredQueue = queue }
        case .consume:
            let consumer = Source(queue: resolve(values.string("queue"), state), noAck: values.bool("no-ack") ?? false)
            state.pendingConsume = consumer
            // With nowait there is no consume-ok: the client's tag is the tag.
            if let tag = values.string("consumer-tag"), !tag.isEmpty { state.consumers[tag] = consumer }
        case .consumeOk:
            if let tag = values.string("consumer-tag"), let consumer = state.pendingConsume {
                state.consumers[tag] = consumer
            }
            state.pendingConsume = nil
        case .cancel:
            if let tag = values.string("consumer-tag") { state.consumers[tag] = nil }
        case .deliver:
            guard let tag = values.string("consumer-tag") else { return nil }
            return deliver(tag, values.int("delivery-tag"), maxOutstanding: maxOutstanding, &state)
        case .get:
            state.pendingGet = Source(queue: resolve(values.string("queue"), state), noAck: values.bool("no-ack") ?? false)
        case .getEmpty:
            state.pendingGet = nil
        case .getOk:
            guard let get = state.pendingGet else { return nil }
            state.pendingGet = nil
            remember(values.int("delivery-tag"), get, maxOutstanding: maxOutstanding, &state)
            return Attribution(queue: get.queue, source: .get)
        case .settle:
            return settle(values, &state)
        case .recover:
            // AMQP 0-9-1 basic.recover: unacknowledged messages are redelivered with new tags.
            state.outstanding = [:]
        }
        return nil
    }

    /// A basic.deliver: the queue of the consumer its tag names, the delivery remembered for the
    /// client's acknowledgement.
    private static func deliver(_ consumerTag: String, _ deliveryTag: Int?, maxOutstanding: Int,
                                _ state: inout ChannelState) -> Attribution? {
        guard let consumer = state.consumers[consumerTag] else { return nil }
        remember(deliveryTag, consumer, maxOutstanding: maxOutstanding, &state)
        return Attribution(queue: consumer.queue, source: .consume)
    }

    /// AMQP 0-9-1 basic.consume / basic.get queue: "If the queue name is empty the server uses
    /// the last queue declared on the channel."
    private static func resolve(_ queue: String?, _ state: ChannelState) -> String {
        guard let queue, !queue.isEmpty else { return state.lastDeclaredQueue ?? "" }
        return queue
    }

    private static func remember(_ deliveryTag: Int?, _ consumer: Source, maxOutstanding: Int, _ state: inout ChannelState) {
        // AMQP 0-9-1 basic.consume no-ack: the broker counts the message acknowledged on sending it.
        guard let deliveryTag, !consumer.noAck, state.outstanding.count < maxOutstanding else { return }
        state.outstanding[deliveryTag] = consumer.queue
    }

    /// basic.ack and basic.nack with `multiple` settle every outstanding tag up to theirs,
    /// and tag 0 with `multiple` settles all (AMQP 0-9-1 basic.ack delivery-tag; RabbitMQ's nack).
    private static func settle(_ values: AMQPArgumentValues, _ state: inout ChannelState) -> Attribution? {
        guard let tag = values.int("delivery-tag") else { return nil }
        return settle(tag, multiple: values.bool("multiple") ?? false, &state)
    }

    private static func settle(_ tag: Int, multiple: Bool, _ state: inout ChannelState) -> Attribution? {
        guard multiple else {
            guard let queue = state.outstanding.removeValue(forKey: tag) else { return nil }
            return Attribution(queue: queue, source: .deliveryTag(tag))
        }
        let covered = state.outstanding.filter { tag == 0 || $0.key <= tag }
        for key in covered.keys { state.outstanding[key] = nil }
        let queues = Set(covered.values)
        if let queue = covered[tag] {
            return Attribution(queue: queue, source: .deliveryTag(tag), ackedCount: covered.count)
        } else if queues.count == 1, let queue = queues.first {
            return Attribution(queue: queue, source: .covered, ackedCount: covered.count)
        }
        return Attribution(queue: nil, source: .covered, ackedCount: covered.count)
    }
}
