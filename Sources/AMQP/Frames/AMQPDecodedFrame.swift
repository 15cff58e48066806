import Dissection

/// One frame read into typed values: its method (the generated struct and its arguments by
/// name) or content header, and every problem found in it — the framer's, the decoder's, and
/// then the connection's (limits, channel state, message assembly). What the connection
/// dissector hands its view (`AMQPFrameView`, in Render's `AMQPViews`): the field tree and what a
/// table counts.
package struct AMQPDecodedFrame {
    package var frame: AMQPRawFrame
    /// A method frame's method; nil for other frame types.
    package var method: AMQPMethodDecoder.Result?
    /// A content header frame's header; nil for other frame types.
    package var header: AMQPContentHeaderDecoder.Result?
    package var problems: [Problem]

    package init(frame: AMQPRawFrame, problems: [Problem]) {
        self.frame = frame
        self.problems = problems
    }
}

/// The deliveries a settlement covered, or the publishes a confirm covered: how many, the first's
/// and the last's frames, and the time since the oldest (microseconds).
package struct AMQPCovered {
    package var count: Int
    package var firstFrame: Int
    package var lastFrame: Int
    package var latency: Int
}

/// What the connection's state adds to a frame (`AMQPConnectionDissector`): the queue it was
/// attributed to, its number in confirm mode, what a broker's confirm covers, and the message
/// it completed. Typed: the views make fields or counts of it.
package struct AMQPFrameNote {
    package var attribution: AMQPQueueTracker.Attribution?
    /// A client's basic.publish on a channel in confirm mode: its number, from 1.
    package var publishSequence: Int?
    /// The broker's basic.ack or basic.nack on a channel in confirm mode.
    package var confirm: Confirm? {
        get { rare.value?.confirm }
        set { rare.change(from: RareParts()) { $0.confirm = newValue } }
    }
    /// The message this frame completed.
    package var message: AMQPMessageAssembly?
    /// Whether the analysis's parts (`settled`, `confirmed`, `redeliveryOf`) are shown.
    package var analysis = false
    /// What the frame says about the broker's topology and routing (with the analysis).
    package var broker: AMQPBrokerEvent?
    /// In a run's second pass: what the first saw become of this publish (`linkIsPublish`) or
    /// delivery.
    package var link: AMQPLinks.Link? {
        get { rare.value?.link }
        set { rare.change(from: RareParts()) { $0.link = newValue } }
    }
    package var linkIsPublish: Bool {
        get { rare.value?.linkIsPublish ?? false }
        set { rare.change(from: RareParts()) { $0.linkIsPublish = newValue } }
    }
    /// A publish's exchange and routing key, for the words of one the first pass found unroutable.
    package var published: (exchange: String, routingKey: String)? {
        get { rare.value?.published }
        set { rare.change(from: RareParts()) { $0.published = newValue } }
    }
    /// A channel.close or connection.close: the request it answers, and that request's frame.
    package var answers: (method: AMQPMethodID, frame: Int)? {
        get { rare.value?.answers }
        set { rare.change(from: RareParts()) { $0.answers = newValue } }
    }
    /// A tx.commit or tx.rollback: what it covered.
    package var transaction: Transaction? {
        get { rare.value?.transaction }
        set { rare.change(from: RareParts()) { $0.transaction = newValue } }
    }
    /// connection.unblocked, or channel.flow that resumes: what was held back since when.
    package var held: Held? {
        get { rare.value?.held }
        set { rare.change(from: RareParts()) { $0.held = newValue } }
    }

    /// The parts few frames have, boxed: a note is made for every frame and handed on by value,
    /// and with them inline it was 856 bytes, most of it empty, copied at each hand-over.
    private var rare = OutOfLine<RareParts>()

    private struct RareParts {
        var confirm: Confirm?
        var link: AMQPLinks.Link?
        var linkIsPublish = false
        var published: (exchange: String, routingKey: String)?
        var answers: (method: AMQPMethodID, frame: Int)?
        var transaction: Transaction?
        var held: Held?
    }

    /// A note of nothing: a frame shown without connection state.
    package init() {}

    package struct Transaction {
        package var committed: Bool
        package var publishes: Int
        package var acknowledgements: Int
    }

    package struct Held {
        /// In words: `the connection's publishers`, `channel 1's flow`.
        package var what: String
        package var since: Int
        /// Microseconds.
        package var duration: Int
    }

    package struct Confirm {
        /// basic.ack (true) or basic.nack.
        package var acknowledged: Bool
        package var multiple: Bool
        package var deliveryTag: Int
        /// The publishes it covered that the capture showed.
        package var confirmed: AMQPCovered?
    }
}
