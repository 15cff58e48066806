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
/// A basic.deliver whose consumer tag no basic.consume in the capture made (the capture began
/// after it) starts a consumer of an unknown queue there: its deliveries are followed to their
/// acknowledgements all the same. Whether it acknowledges at all is unknown (no-ack is in the
/// basic.consume), so its deliveries are reported unacknowledged only once it has settled one.
///
/// Consumer tags and delivery tags are scoped to a channel (AMQP 0-9-1 domain delivery-tag:
/// "the delivery tag is valid only within the channel from which the message was received"),
/// so all state is per channel and forgotten when the channel opens or closes.
package struct AMQPQueueTracker {
    /// Where deliveries come from: a consumer's or a basic.get's queue, and whether the
    /// client acknowledges them.
    private struct Source {
        /// Nil for a consumer whose basic.consume came before the capture.
        var queue: String?
        var noAck: Bool
    }

    private struct ChannelState {
        /// AMQP 0-9-1 queue.declare-ok / basic.consume queue: an empty queue name in later
        /// methods means the channel's last declared queue.
        var lastDeclaredQueue: String?
        /// The channel's consumers by tag: read through `consumer(_:)`, changed through
        /// `setConsumer(_:for:)`, which keep `lastConsumer` true to them.
        private var consumers: [String: Source] = [:]
        /// The basic.consume waiting for its consume-ok (the server may choose the tag).
        var pendingConsume: Source?
        /// The basic.get waiting for get-ok or get-empty.
        var pendingGet: Source?
        /// Deliveries not yet acknowledged, by delivery tag.
        var outstanding: [Int: Outstanding] = [:]
        /// basic.qos prefetch-count with `global` unset: the most unacknowledged deliveries the
        /// broker sends each consumer started after it (0: no limit). RabbitMQ's reading of the
        /// spec's "global" bit: per consumer unless set.
        var prefetch = 0
        /// basic.qos prefetch-count with `global` set: the most unacknowledged deliveries the
        /// broker sends the channel's consumers together (0: no limit).
        var channelPrefetch = 0
        /// Deliveries to the channel's consumers not yet acknowledged (a basic.get's are not
        /// held to a prefetch).
        var consumersInFlight = 0
        /// Deliveries that left the channel at its global prefetch limit: how many, the first frames.
        var atLimit = 0
        var atLimitFrames: [Int] = []
        /// Frames of deliveries the client gave back with `requeue`, oldest first: a redelivery
        /// (the redelivered flag) is most likely of the oldest.
        var requeued: [Int] = []
        /// Each consumer's deliveries and settlements since its basic.consume-ok, by tag.
        var consumerStats: [String: Consumer] = [:]
        /// Consumers from before the capture that have settled none of their deliveries yet: they
        /// may be no-ack ones, so their deliveries are not reported unacknowledged.
        var mayNotAcknowledge: Set<String> = []
        /// The consumer last found: a consumer's deliveries come in runs, and comparing its tag
        /// costs less than hashing it (a server-made tag is 40 bytes and more).
        private var lastConsumer: (tag: String, source: Source)?

        /// The consumer of `tag`, if the channel has one.
        mutating func consumer(_ tag: String) -> Source? {
            if let last = lastConsumer, last.tag == tag { return last.source }
            guard let found = consumers[tag] else { return nil }
            lastConsumer = (tag, found)
            return found
        }

        /// Makes `source` the consumer of `tag` (nil: none).
        mutating func setConsumer(_ source: Source?, for tag: String) {
            lastConsumer = nil
            consumers[tag] = source
        }
    }

    /// A consumer's life on its channel: where it began, its deliveries and how they were settled.
    package struct Consumer {
        package var tag: String
        /// Nil when its basic.consume came before the capture.
        package var queue: String?
        package var frame: Int
        package var time: Timestamp
        package var deliveries = 0
        package var acknowledged = 0
        package var rejected = 0
        package var lastDelivery: Timestamp?
        /// The channel's per-consumer prefetch-count when it began (0: none).
        package var prefetch = 0
        /// Its deliveries not yet acknowledged.
        package var inFlight = 0
        /// Deliveries that left it at its prefetch limit: how many, the first frames.
        package var atLimit = 0
        package var atLimitFrames: [Int] = []
        /// Its basic.consume came before the capture: it began at its first delivery (`frame`).
        package var beforeCapture: Bool { queue == nil }
    }

    /// A delivery awaiting the client's acknowledgement: its queue, and where it came.
    package struct Outstanding {
        /// Nil when its consumer's basic.consume came before the capture.
        package var queue: String?
        package var frame: Int
        package var time: Timestamp
        /// Its place among the connection's publishes and deliveries in its frame (`AMQPLinks`).
        package var place = 0
        /// The consumer it went to; empty for a basic.get.
        package var consumer = ""
    }

    /// What a channel left when it closed (or the connection ended): the deliveries still
    /// unacknowledged, in frame order, and how often it was held at its global prefetch limit
    /// (each consumer's own is on the consumer).
    package struct Left {
        package var channel: UInt16
        package var unacknowledged: [Outstanding]
        /// The global prefetch-count (0: none).
        package var prefetch: Int
        package var atLimit: Int
        package var atLimitFrames: [Int]
        /// Its consumers still consuming, by the order they began.
        package var consumers: [Consumer] = []
    }

    /// Most outstanding deliveries remembered per channel; beyond it new ones are not
    /// attributed (a consumer with no prefetch limit that never acks would grow it forever).
    package let maxOutstanding: Int
    /// Each channel's state, in a short list searched from the last one used (a connection uses
    /// a few channels; a dictionary hashed the number per frame).
    private var channelNumbers: [UInt16] = []
    private var channelStates: [ChannelState] = []
    private var lastChannel = 0

    package init(maxOutstanding: Int) {
        self.maxOutstanding = max(maxOutstanding, 0)
    }

    /// Forgets a channel's consumers and deliveries (channel.open, channel.close-ok), returning
    /// what it left.
    @discardableResult
    package mutating func reset(channel: UInt16) -> Left? {
        guard let i = channelNumbers.firstIndex(of: channel) else { return nil }
        let state = channelStates[i]
        channelNumbers.remove(at: i)
        channelStates.remove(at: i)
        lastChannel = 0
        return Self.left(channel, state)
    }

    /// The queue a method names on `channel`: its own name, or for an empty one the channel's
    /// last declared queue (AMQP 0-9-1 queue.bind, queue.delete: "If the queue name is empty,
    /// the server uses the last queue declared on the channel").
    package func queueName(_ name: String, channel: UInt16) -> String {
        guard name.isEmpty, let i = channelNumbers.firstIndex(of: channel) else { return name }
        return channelStates[i].lastDeclaredQueue ?? name
    }

    /// What every channel still open left, in channel order (the connection ended).
    package func leftOpen() -> [Left] {
        zip(channelNumbers, channelStates).sorted { $0.0 < $1.0 }.map { Self.left($0.0, $0.1) }
    }

    private static func left(_ channel: UInt16, _ state: ChannelState) -> Left {
        let unacknowledged = state.outstanding.values.filter {
            state.mayNotAcknowledge.isEmpty || !state.mayNotAcknowledge.contains($0.consumer)
        }
        return Left(channel: channel, unacknowledged: unacknowledged.sorted { $0.frame < $1.frame },
             prefetch: state.channelPrefetch, atLimit: state.atLimit, atLimitFrames: state.atLimitFrames,
             consumers: state.consumerStats.values.sorted { $0.frame < $1.frame })
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
        case declareOk, consume, consumeOk, cancel, deliver, get, getEmpty, getOk, settle, recover, qos

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
            case (60, 10, .toServer): self = .qos // basic.qos
            default: return nil
            }
        }
    }

    /// What a delivery or a settlement was attributed to: its queue (none when a `multiple`
    /// settlement covered several), how it was found, and for `multiple`, the deliveries covered.
    /// Summaries take the queue and count as they are; trees show them as fields (its view).
    package struct Attribution {
        package enum Source {
            case consume
            case get
            case deliveryTag(Int)
            /// The deliveries a `multiple` settlement covered, all of one queue.
            case covered
        }

        package var queue: String?
        package var source: Source
        package var ackedCount: Int?
        /// A client's settlement: the deliveries it covered.
        package var settled: Settled?
        /// A delivery with the redelivered flag: the frame of the delivery it most likely repeats
        /// (the oldest given back with `requeue` on the channel).
        package var redeliveryOf: Int?
        /// basic.cancel-ok (or the broker's basic.cancel): the consumer that ended.
        package var consumerEnded: Consumer? {
            get { ended.value }
            set { ended.set(newValue) }
        }
        /// `consumerEnded`, boxed: few frames end a consumer, and an attribution is copied with
        /// every frame's note.
        fileprivate var ended = OutOfLine<Consumer>()

        /// The deliveries a basic.ack, basic.nack or basic.reject covered.
        package struct Settled {
            package var frames: AMQPCovered
            package var requeue: Bool
            /// Each delivery covered, when asked for (a first pass's links).
            package var covered: [Outstanding] = []
        }
    }

    /// Notes what a method says about queues and returns what it attributes the PDU to, if anything.
    /// `frame` and `time`: where the method came.
    /// `place`: the method's among the connection's publishes and deliveries in the frame;
    /// `listsCovered`: whether a settlement lists each delivery it covers.
    package mutating func track(_ id: AMQPMethodID, _ method: AMQPMethod, channel: UInt16, from direction: Direction,
                        frame: Int, time: Timestamp, place: Int = 0, listsCovered: Bool = false) -> Attribution? {
        // Only these methods concern queues: others need no channel state.
        guard let step = Step(id, from: direction) else { return nil }
        let i = slot(channel)
        // Changed where it is stored: a copy would share, then copy, its dictionaries per frame.
        // The steps are static: a method of `self` called with `self.channelStates` in-out
        // would be called on a copy of `self`, which shares the array, so the in-out access
        // copied it per frame.
        return Self.track(step, method, maxOutstanding: maxOutstanding, at: (frame, time, place), listsCovered: listsCovered,
                          &channelStates[i])
    }

    private static func track(_ step: Step, _ method: AMQPMethod, maxOutstanding: Int,
                              at place: (frame: Int, time: Timestamp, place: Int), listsCovered: Bool,
                              _ state: inout ChannelState) -> Attribution? {
        switch step {
        case .declareOk:
            if let queue = method.queue { state.lastDeclaredQueue = queue }
        case .consume:
            let consumer = Source(queue: resolve(method.queue, state), noAck: method.noAck ?? false)
            state.pendingConsume = consumer
            // With nowait there is no consume-ok: the client's tag is the tag.
            if let tag = method.consumerTag, !tag.isEmpty {
                state.setConsumer(consumer, for: tag)
                if method.nowait == true {
                    state.consumerStats[tag] = Consumer(tag: tag, queue: consumer.queue, frame: place.frame, time: place.time,
                                                       prefetch: state.prefetch)
                }
            }
        case .consumeOk:
            if let tag = method.consumerTag, let consumer = state.pendingConsume {
                state.setConsumer(consumer, for: tag)
                state.consumerStats[tag] = Consumer(tag: tag, queue: consumer.queue, frame: place.frame, time: place.time,
                                                   prefetch: state.prefetch)
            }
            state.pendingConsume = nil
        case .cancel:
            guard let tag = method.consumerTag else { return nil }
            state.setConsumer(nil, for: tag)
            guard let ended = state.consumerStats.removeValue(forKey: tag) else { return nil }
            var attribution = Attribution(queue: nil, source: .consume)
            attribution.consumerEnded = ended
            return attribution
        case .deliver:
            guard let tag = method.consumerTag else { return nil }
            guard var attribution = deliver(tag, method.deliveryTag, maxOutstanding: maxOutstanding, at: place, &state) else { return nil }
            if method.redelivered == true { attribution.redeliveryOf = redelivery(&state) }
            return attribution
        case .get:
            state.pendingGet = Source(queue: resolve(method.queue, state), noAck: method.noAck ?? false)
        case .getEmpty:
            state.pendingGet = nil
        case .getOk:
            guard let get = state.pendingGet else { return nil }
            state.pendingGet = nil
            remember(method.deliveryTag, get, maxOutstanding: maxOutstanding, at: place, &state)
            var attribution = Attribution(queue: get.queue, source: .get)
            if method.redelivered == true { attribution.redeliveryOf = redelivery(&state) }
            return attribution
        case .settle:
            return settle(method, at: place.time, listsCovered: listsCovered, &state)
        case .qos:
            // AMQP 0-9-1 basic.qos prefetch-count. RabbitMQ applies it to each consumer started
            // after it with `global` unset, to the channel's consumers together with it set.
            let count = method.prefetchCount ?? 0
            if method.global == true { state.channelPrefetch = count } else { state.prefetch = count }
        case .recover:
            // AMQP 0-9-1 basic.recover: unacknowledged messages are redelivered with new tags.
            state.outstanding = [:]
            state.consumersInFlight = 0
            for tag in Array(state.consumerStats.keys) { state.consumerStats[tag]!.inFlight = 0 }
        }
        return nil
    }

    /// A basic.deliver: the queue of the consumer its tag names, the delivery remembered for the
    /// client's acknowledgement.
    private static func deliver(_ consumerTag: String, _ deliveryTag: Int?, maxOutstanding: Int,
                                at place: (frame: Int, time: Timestamp, place: Int), _ state: inout ChannelState) -> Attribution? {
        if state.consumer(consumerTag) == nil, !consumerTag.isEmpty {
            // Its basic.consume came before the capture: a consumer of an unknown queue from here.
            state.setConsumer(Source(queue: nil, noAck: false), for: consumerTag)
            state.consumerStats[consumerTag] = Consumer(tag: consumerTag, queue: nil, frame: place.frame, time: place.time)
            state.mayNotAcknowledge.insert(consumerTag)
        }
        guard let consumer = state.consumer(consumerTag) else { return nil }
        // Found once and changed in place (a read, then a write, hashed the tag twice).
        let stats = state.consumerStats.index(forKey: consumerTag)
        if let stats {
            state.consumerStats.values[stats].deliveries += 1
            state.consumerStats.values[stats].lastDelivery = place.time
        }
        remember(deliveryTag, consumer, maxOutstanding: maxOutstanding, at: place, consumerTag: consumerTag, stats: stats, &state)
        return Attribution(queue: consumer.queue, source: .consume)
    }

    /// AMQP 0-9-1 basic.consume / basic.get queue: "If the queue name is empty the server uses
    /// the last queue declared on the channel."
    private static func resolve(_ queue: String?, _ state: ChannelState) -> String {
        guard let queue, !queue.isEmpty else { return state.lastDeclaredQueue ?? "" }
        return queue
    }

    /// `stats`: where the consumer's `consumerStats` entry is, if it has one.
    private static func remember(_ deliveryTag: Int?, _ consumer: Source, maxOutstanding: Int,
                                 at place: (frame: Int, time: Timestamp, place: Int), consumerTag: String = "",
                                 stats: Dictionary<String, Consumer>.Index? = nil, _ state: inout ChannelState) {
        // AMQP 0-9-1 basic.consume no-ack: the broker counts the message acknowledged on sending it.
        guard let deliveryTag, !consumer.noAck, state.outstanding.count < maxOutstanding else { return }
        state.outstanding[deliveryTag] = Outstanding(queue: consumer.queue, frame: place.frame, time: place.time, place: place.place,
                                                     consumer: consumerTag)
        guard !consumerTag.isEmpty else { return }
        // AMQP 0-9-1 basic.qos: the broker sends no more until an acknowledgement makes room,
        // to the consumer (its own limit) or to the channel's consumers (the global one).
        if let stats {
            Self.addInFlight(&state.consumerStats.values[stats], at: place.frame)
        }
        state.consumersInFlight += 1
        if state.channelPrefetch > 0, state.consumersInFlight >= state.channelPrefetch {
            state.atLimit += 1
            if state.atLimitFrames.count < 8 { state.atLimitFrames.append(place.frame) }
        }
    }

    /// One more delivery in a consumer's flight, counted at its prefetch limit when it reaches it.
    private static func addInFlight(_ c: inout Consumer, at frame: Int) {
        c.inFlight += 1
        if c.prefetch > 0, c.inFlight >= c.prefetch {
            c.atLimit += 1
            if c.atLimitFrames.count < 8 { c.atLimitFrames.append(frame) }
        }
    }

    /// The delivery a redelivery most likely repeats: the oldest given back with `requeue`.
    private static func redelivery(_ state: inout ChannelState) -> Int? {
        state.requeued.isEmpty ? nil : state.requeued.removeFirst()
    }

    /// basic.ack and basic.nack with `multiple` settle every outstanding tag up to theirs,
    /// and tag 0 with `multiple` settles all (AMQP 0-9-1 basic.ack delivery-tag; RabbitMQ's nack).
    private static func settle(_ method: AMQPMethod, at time: Timestamp, listsCovered: Bool,
                               _ state: inout ChannelState) -> Attribution? {
        guard let tag = method.deliveryTag else { return nil }
        // AMQP 0-9-1 basic.nack / basic.reject requeue: the broker queues the message again.
        // basic.reject has no `multiple`; an ack no `requeue`.
        return settle(tag, multiple: method.multiple ?? false, requeue: method.requeue ?? false,
                      acknowledges: method.requeue == nil, at: time, listsCovered: listsCovered, &state)
    }

    /// Each settled delivery's consumer: one acknowledged (`acknowledges`) or rejected more.
    private static func credit(_ delivery: Outstanding, acknowledges: Bool, _ state: inout ChannelState) {
        guard !delivery.consumer.isEmpty else { return }
        state.consumersInFlight = max(0, state.consumersInFlight - 1)
        if !state.mayNotAcknowledge.isEmpty { state.mayNotAcknowledge.remove(delivery.consumer) }
        guard let i = state.consumerStats.index(forKey: delivery.consumer) else { return }
        if acknowledges { state.consumerStats.values[i].acknowledged += 1 } else { state.consumerStats.values[i].rejected += 1 }
        state.consumerStats.values[i].inFlight = max(0, state.consumerStats.values[i].inFlight - 1)
    }

    private static func settle(_ tag: Int, multiple: Bool, requeue: Bool, acknowledges: Bool, at time: Timestamp, listsCovered: Bool,
                               _ state: inout ChannelState) -> Attribution? {
        guard multiple else {
            guard let delivery = state.outstanding.removeValue(forKey: tag) else { return nil }
            credit(delivery, acknowledges: acknowledges, &state)
            var attribution = Attribution(queue: delivery.queue, source: .deliveryTag(tag))
            attribution.settled = Attribution.Settled(frames: AMQPCovered(count: 1, firstFrame: delivery.frame, lastFrame: delivery.frame,
                                                                          latency: max(0, time.microseconds(since: delivery.time))),
                                                      requeue: requeue,
                                                      covered: listsCovered ? [delivery] : [])
            if requeue, state.requeued.count < 64 { state.requeued.append(delivery.frame) }
            return attribution
        }
        let covered = state.outstanding.filter { tag == 0 || $0.key <= tag }
        for key in covered.keys { state.outstanding[key] = nil }
        for delivery in covered.values { credit(delivery, acknowledges: acknowledges, &state) }
        let queues = Set(covered.values.map(\.queue))
        var attribution: Attribution
        if let delivery = covered[tag] {
            attribution = Attribution(queue: delivery.queue, source: .deliveryTag(tag), ackedCount: covered.count)
        } else if queues.count == 1, let queue = queues.first ?? nil {
            attribution = Attribution(queue: queue, source: .covered, ackedCount: covered.count)
        } else {
            attribution = Attribution(queue: nil, source: .covered, ackedCount: covered.count)
        }
        let frames = covered.values.map(\.frame).sorted()
        if let first = frames.first, let last = frames.last, let oldest = covered.values.map(\.time).min() {
            attribution.settled = Attribution.Settled(frames: AMQPCovered(count: frames.count, firstFrame: first, lastFrame: last,
                                                                          latency: max(0, time.microseconds(since: oldest))),
                                                      requeue: requeue,
                                                      covered: listsCovered ? Array(covered.values) : [])
            if requeue { for frame in frames where state.requeued.count < 64 { state.requeued.append(frame) } }
        }
        return attribution
    }
}
