/// What an analysis found, as a short machine code (`incomplete_flow`): the `kind` of an
/// `AnalysisRecord`. Open and listed, as `ProblemCode` is: every kind this tool gives is a static
/// member below, and docs/json-schema.md explains each.
public struct AnalysisKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
    /// The kind in words, for text: `incomplete flow`.
    public var words: String { String(decoding: rawValue.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: " ") : $0 }, as: UTF8.self) }
}

// Every kind this tool gives, in the order of docs/json-schema.md's table.
extension AnalysisKind {
    /// MQTT: a QoS 1 or 2 PUBLISH that got no PUBACK or PUBREC before the connection ended;
    /// AMQP: deliveries the client had not acknowledged when their channel closed or the connection ended
    public static let unacknowledged = AnalysisKind(rawValue: "unacknowledged")
    /// MQTT: a QoS 2 flow that got its PUBREC but not its PUBREL or PUBCOMP before the connection ended
    public static let incompleteFlow = AnalysisKind(rawValue: "incomplete_flow")
    /// MQTT: a PUBACK, PUBREC, PUBREL or PUBCOMP with no flow of its packet identifier in flight
    public static let unexpectedAcknowledgement = AnalysisKind(rawValue: "unexpected_ack")
    /// MQTT: a PUBLISH reuses the packet identifier of a flow still open
    public static let packetIDReused = AnalysisKind(rawValue: "packet_id_reused")
    /// MQTT 5.0: more QoS 1 and 2 PUBLISHes in flight than the receiver's Receive Maximum
    public static let receiveMaximumExceeded = AnalysisKind(rawValue: "receive_maximum_exceeded")
    /// MQTT 5.0: an acknowledgement whose reason code is a failure (0x80 or more)
    public static let refused = AnalysisKind(rawValue: "refused")
    /// MQTT: more flows in flight in one direction than are followed (`--max-flows-in-flight`)
    public static let flowsNotFollowed = AnalysisKind(rawValue: "flows_not_followed")
    /// MQTT: the client sent nothing for longer than 1.5 times its keep-alive
    public static let keepAliveExceeded = AnalysisKind(rawValue: "keepalive_exceeded")
    /// MQTT: a CONNACK with Session Present to a CONNECT with Clean Session (Clean Start) set
    public static let sessionPresentMismatch = AnalysisKind(rawValue: "session_present_mismatch")
    /// MQTT: the connection ended without a DISCONNECT, not by the broker: the client's will fires
    public static let noDisconnect = AnalysisKind(rawValue: "no_disconnect")
    /// MQTT: the broker closed the connection without a DISCONNECT, with the likely cause
    public static let closedByBroker = AnalysisKind(rawValue: "closed_by_broker")
    /// MQTT, across connections: a client id that connected again after its connection ended,
    /// with the intervals (its reconnect backoff)
    public static let reconnect = AnalysisKind(rawValue: "reconnect")
    /// MQTT, across connections: a CONNECT with the client id of a connection still open
    public static let sessionTakeover = AnalysisKind(rawValue: "session_takeover")
    /// MQTT, across connections: a client PUBLISH no subscriber in the capture received, though
    /// a subscription matching it was open
    public static let undelivered = AnalysisKind(rawValue: "undelivered")
    /// MQTT, across connections: a topic's PUBLISHes, their deliveries, fan-out and latency, and
    /// its retained message
    public static let topicDelivery = AnalysisKind(rawValue: "topic_delivery")
    /// MQTT, across connections: a client's will, published by the broker after its connection
    /// ended without a DISCONNECT, linked to the deliveries of it
    public static let willPublished = AnalysisKind(rawValue: "will_published")

    /// AMQP: publishes on a channel in confirm mode that the broker had not confirmed when the
    /// channel closed or the connection ended
    public static let unconfirmed = AnalysisKind(rawValue: "unconfirmed")
    /// AMQP: a consumer (or, with a global basic.qos, a channel's consumers together) whose
    /// unacknowledged deliveries reached the prefetch-count again and again: each further
    /// delivery waited for an acknowledgement
    public static let prefetchLimited = AnalysisKind(rawValue: "prefetch_limited")

    /// AMQP, across connections (after the PDUs): the exchanges, queues and bindings the capture
    /// shows, and where each exchange and routing key published to was routed
    public static let topology = AnalysisKind(rawValue: "topology")
    /// AMQP, across connections: a publish no binding seen routes to any queue
    public static let unroutable = AnalysisKind(rawValue: "unroutable")
    /// AMQP, across connections: the broker routed otherwise than the bindings seen say
    public static let routingMismatch = AnalysisKind(rawValue: "routing_mismatch")
    /// AMQP: a connection's publishers (connection.blocked) or a channel (channel.flow) held
    /// back by the broker until the connection ended
    public static let stillBlocked = AnalysisKind(rawValue: "still_blocked")
    /// AMQP: a consumer's life, from basic.consume-ok to its cancel, its channel's close or the
    /// connection's end: deliveries, how they were settled, the rate
    public static let consumer = AnalysisKind(rawValue: "consumer")
    /// AMQP, across connections: a declare the broker refused (406) because an earlier one in
    /// the capture made the queue or exchange otherwise
    public static let declareRefused = AnalysisKind(rawValue: "declare_refused")

    /// Every kind above, in order.
    public static let known: [AnalysisKind] = [
        .unacknowledged, .incompleteFlow, .unexpectedAcknowledgement, .packetIDReused, .receiveMaximumExceeded, .refused,
        .flowsNotFollowed, .keepAliveExceeded, .sessionPresentMismatch, .noDisconnect, .closedByBroker, .reconnect,
        .sessionTakeover, .undelivered, .topicDelivery, .willPublished, .unconfirmed, .prefetchLimited,
        .topology, .unroutable, .routingMismatch, .declareRefused, .consumer, .stillBlocked,
    ]
}

/// One finding of an analysis about a sequence of PDUs (a flow left incomplete, an
/// acknowledgement with nothing to acknowledge): emitted as `OutputEvent.analysis` where it is
/// found, after the PDU that shows it, or when the connection ends.
public struct AnalysisRecord: Sendable {
    public var protocolName: String
    public var kind: AnalysisKind
    /// Where it was found (the frame of the PDU that showed it, or where the connection ended);
    /// filled in by the pipeline.
    public var context: StreamContext?
    /// The frames of the PDUs it concerns, in capture order.
    public var frames: [Int]
    /// What happened, in words.
    public var message: String
    /// Where the specification says so, e.g. `MQTT 3.1.1 §4.3.3`.
    public var reference: String?
    /// More about it, by key (`packet_id`, `qos`, `step`): JSON members, text detail.
    public var fields: [Field]

    public init(protocolName: String, kind: AnalysisKind, frames: [Int], message: String, reference: String? = nil,
                fields: [Field] = [], context: StreamContext? = nil) {
        self.protocolName = protocolName
        self.kind = kind
        self.frames = frames
        self.message = message
        self.reference = reference
        self.fields = fields
        self.context = context
    }
}

/// What an analysis of one connection found when it ended: its message flows, and how it ended.
public struct ConnectionAnalysis: Sendable {
    public var flows: FlowStatistics?
    /// How the connection ended, in words: `client DISCONNECT #12`, `broker closed it: keep-alive expired`.
    public var ending: String?

    public init(flows: FlowStatistics? = nil, ending: String? = nil) {
        self.flows = flows
        self.ending = ending
    }
}

/// What a connection's message flows came to (MQTT QoS 1 and 2): how many completed and how
/// long they took, how many were left open. Summed over connections with `add`.
public struct FlowStatistics: Sendable, Equatable {
    /// Flows that reached their last step (PUBACK; PUBCOMP).
    public var completed = 0
    /// Flows left open when the connection ended.
    public var incomplete = 0
    /// Completion times (first PUBLISH to last acknowledgement), microseconds.
    public var latency = LatencyHistogram()

    public init() {}

    public mutating func add(_ other: FlowStatistics) {
        completed += other.completed
        incomplete += other.incomplete
        latency.add(other.latency)
    }
}

/// Latencies in fixed memory: exact count, sum, minimum and maximum, and a histogram of eight
/// equal steps per doubling from 1 µs, from which a percentile is read to within 7% (the middle
/// of its step). Up to four values are kept exactly, and their percentiles are exact.
public struct LatencyHistogram: Sendable, Equatable {
    /// Buckets per doubling.
    static let perDoubling = 8
    /// Up to 2^40 µs (12 days).
    static let bucketCount = 40 * perDoubling + 1
    /// Values kept exactly before the buckets are made: most connections complete a few flows,
    /// and 321 buckets for each (1.3 KB) cost more than their flows.
    static let exactValues = 4
    private var buckets: [UInt32] = []
    private var exact: (Int, Int, Int, Int) = (0, 0, 0, 0)
    public private(set) var count = 0
    public private(set) var maximum = 0
    public private(set) var minimum = Int.max
    public private(set) var total = 0

    public init() {}

    public static func == (a: LatencyHistogram, b: LatencyHistogram) -> Bool {
        a.count == b.count && a.maximum == b.maximum && a.minimum == b.minimum && a.total == b.total
            && a.sortedExact == b.sortedExact && a.buckets == b.buckets
    }

    /// The values kept exactly (while `count` is at most `exactValues`), in order.
    private var sortedExact: [Int] {
        guard buckets.isEmpty else { return [] }
        return [exact.0, exact.1, exact.2, exact.3].prefix(count).sorted()
    }

    public mutating func record(_ microseconds: Int) {
        let value = max(0, microseconds)
        if buckets.isEmpty && count < Self.exactValues {
            switch count {
            case 0: exact.0 = value
            case 1: exact.1 = value
            case 2: exact.2 = value
            default: exact.3 = value
            }
        } else {
            spill()
            buckets[Self.bucket(of: value)] &+= 1
        }
        count += 1
        total &+= value
        maximum = max(maximum, value)
        minimum = min(minimum, value)
    }

    /// Moves the exact values into buckets.
    private mutating func spill() {
        guard buckets.isEmpty else { return }
        let kept = sortedExact
        buckets = Array(repeating: 0, count: Self.bucketCount)
        for v in kept { buckets[Self.bucket(of: v)] &+= 1 }
    }

    public mutating func add(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        if other.buckets.isEmpty && buckets.isEmpty && count + other.count <= Self.exactValues {
            let (c, m, n, t) = (count, maximum, minimum, total)
            for v in other.sortedExact { record(v) }
            count = c + other.count
            maximum = max(m, other.maximum)
            minimum = min(n, other.minimum)
            total = t &+ other.total
            return
        }
        spill()
        if other.buckets.isEmpty {
            for v in other.sortedExact { buckets[Self.bucket(of: v)] &+= 1 }
        } else {
            for i in other.buckets.indices { buckets[i] &+= other.buckets[i] }
        }
        count += other.count
        total &+= other.total
        maximum = max(maximum, other.maximum)
        minimum = min(minimum, other.minimum)
    }

    /// The bucket of a value: 0 for under 1 µs, then `perDoubling` equal steps per doubling
    /// (2^k, 2^k·(1 + 1/8), ...): integer arithmetic only.
    static func bucket(of value: Int) -> Int {
        guard value >= 1 else { return 0 }
        let k = Int.bitWidth - 1 - value.leadingZeroBitCount
        let step = k >= 3 ? (value >> (k - 3)) & 7 : ((value << (3 - k)) & 7)
        return min(bucketCount - 1, 1 + k * perDoubling + step)
    }

    /// The value a bucket stands for: the middle of its step.
    static func value(ofBucket bucket: Int) -> Double {
        guard bucket > 0 else { return 0 }
        let k = (bucket - 1) / perDoubling, step = (bucket - 1) % perDoubling
        var power = 1.0
        for _ in 0..<k { power *= 2 }
        return power * (1 + (Double(step) + 0.5) / Double(perDoubling))
    }

    /// The `p`-th percentile (0...100), microseconds: exact at the ends (the minimum and the
    /// maximum), else the middle of its bucket, kept within the minimum and maximum. Nil when empty.
    public func percentile(_ p: Double) -> Int? {
        guard count > 0 else { return nil }
        if p <= 0 { return minimum }
        if p >= 100 { return maximum }
        let rank = max(1, Int((p / 100 * Double(count)).rounded(.up)))
        if buckets.isEmpty { return sortedExact[min(rank, count) - 1] }
        var seen = 0
        for (i, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank { return min(maximum, max(minimum, Int(Self.value(ofBucket: i).rounded()))) }
        }
        return maximum
    }
}

/// Latency in words: `420 µs`, `1.25 ms`, `3.2 s`.
public func latencyText(microseconds us: Int) -> String {
    var out = ByteSink(capacity: 16)
    out.appendLatency(microseconds: us)
    return out.take()
}

extension ByteSink {
    /// `latencyText(microseconds:)`, written in place: an annotation is made of several, and an
    /// interpolated string per piece cost more than the rest of the annotation.
    public mutating func appendLatency(microseconds us: Int) {
        if us < 1000 {
            append(us)
            literal(" µs")
            return
        }
        if us < 1_000_000 {
            let ms = Double(us) / 1000
            if ms < 10 { appendRounded(ms, digits: 2) } else if ms < 100 { appendRounded(ms, digits: 1) } else { append(Int(ms.rounded())) }
            literal(" ms")
            return
        }
        let s = Double(us) / 1e6
        appendRounded(s, digits: s < 10 ? 2 : 1)
        literal(" s")
    }

    /// `x` rounded to `digits` (1 or 2) decimals, the decimals written even when zero (`10.00`).
    private mutating func appendRounded(_ x: Double, digits: Int) {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int((x * scale).rounded())
        let whole = n / Int(scale), fraction = n % Int(scale)
        append(whole)
        literal(".")
        // Leading zeros of the decimals (`05`).
        var shown = 1
        var rest = fraction
        while rest >= 10 {
            rest /= 10
            shown += 1
        }
        for _ in shown..<max(shown, digits) { literal("0") }
        append(fraction)
    }
}
