import Dissection

/// One frame read into typed values: its method (the generated struct and its arguments by
/// name) or content header, and every problem found in it — the framer's, the decoder's, and
/// then the connection's (limits, channel state, message assembly). What the connection
/// dissector hands its views: the field tree (`AMQPDecodedFrame+FieldTree.swift`) and what a
/// table counts (`AMQPDecodedFrame+Counted.swift`).
struct AMQPDecodedFrame {
    var frame: AMQPRawFrame
    /// A method frame's method; nil for other frame types.
    var method: AMQPMethodDecoder.Result?
    /// A content header frame's header; nil for other frame types.
    var header: AMQPContentHeaderDecoder.Result?
    var problems: [Problem]

    init(frame: AMQPRawFrame, problems: [Problem]) {
        self.frame = frame
        self.problems = problems
    }
}

/// The deliveries a settlement covered, or the publishes a confirm covered: how many, the first's
/// and the last's frames, and the time since the oldest (microseconds).
struct AMQPCovered {
    var count: Int
    var firstFrame: Int
    var lastFrame: Int
    var latency: Int
}

/// What the connection's state adds to a frame (`AMQPConnectionDissector`): the queue it was
/// attributed to, its number in confirm mode, what a broker's confirm covers, and the message
/// it completed. Typed: the views make fields or counts of it.
struct AMQPFrameNote {
    var attribution: AMQPQueueTracker.Attribution?
    /// A client's basic.publish on a channel in confirm mode: its number, from 1.
    var publishSequence: Int?
    /// The broker's basic.ack or basic.nack on a channel in confirm mode.
    var confirm: Confirm?
    /// The message this frame completed.
    var message: AMQPMessageAssembly?
    /// Whether the analysis's parts (`settled`, `confirmed`, `redeliveryOf`) are shown.
    var analysis = false
    /// What the frame says about the broker's topology and routing (with the analysis).
    var broker: AMQPBrokerEvent?
    /// In a run's second pass: what the first saw become of this publish (`linkIsPublish`) or
    /// delivery.
    var link: AMQPLinks.Link?
    var linkIsPublish = false
    /// A publish's exchange and routing key, for the words of one the first pass found unroutable.
    var published: (exchange: String, routingKey: String)?
    /// A channel.close or connection.close: the request it answers, and that request's frame.
    var answers: (method: AMQPMethodID, frame: Int)?
    /// A tx.commit or tx.rollback: what it covered.
    var transaction: Transaction?
    /// connection.unblocked, or channel.flow that resumes: what was held back since when.
    var held: Held?

    struct Transaction {
        var committed: Bool
        var publishes: Int
        var acknowledgements: Int
    }

    struct Held {
        /// In words: `the connection's publishers`, `channel 1's flow`.
        var what: String
        var since: Int
        /// Microseconds.
        var duration: Int
    }

    struct Confirm {
        /// basic.ack (true) or basic.nack.
        var acknowledged: Bool
        var multiple: Bool
        var deliveryTag: Int
        /// The publishes it covered that the capture showed.
        var confirmed: AMQPCovered?
    }
}
