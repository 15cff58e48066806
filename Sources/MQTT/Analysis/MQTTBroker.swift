import Dissection

/// A model of the broker across connections (a `SpanningAnalysis`): each connection's
/// subscriptions (filters with `+` and `#`, MQTT 3.1.1 §4.7, 5.0 §4.7), each client PUBLISH
/// matched to the deliveries of it on subscribers' connections, the retained message of each
/// topic. Per topic: publishes, deliveries, fan-out and the latency from a PUBLISH to each
/// delivery; a record for each PUBLISH that no subscriber in the capture received although a
/// subscription matching it was seen.
///
/// A delivery is matched to the oldest PUBLISH of its topic and payload length, published before
/// it and not yet delivered on that connection (a broker keeps a topic's order per subscriber,
/// §4.6): the same matching in every format, since a table's counted PDUs carry no payload. A
/// delivery with RETAIN set is the broker's stored message, not a new one.
///
/// Memory: each connection's filters (up to `maxFilters`), each topic's totals and retained
/// message (up to `maxTopics`), and the PUBLISHes of the last `window` seconds of capture time
/// (up to `maxPending`), after which a PUBLISH's deliveries are final.
// Unchecked: `observe` and `finish` run on the caller's thread alone (SpanningAnalysis); `reads`,
// asked on the workers, reads nothing of it.
public final class MQTTBroker: SpanningAnalysis, @unchecked Sendable {
    static let window: Int64 = 10_000_000_000
    static let maxPending = 65_536
    static let maxTopics = 65_536
    static let maxFilters = 1_024
    static let maxUndeliveredRecords = 1_000

    final class Pending {
        let frame: Int
        let stream: Int
        let time: Int64
        let length: Int
        /// Whether a subscription matching the topic, on a connection other than the
        /// publisher's... or its own, was open when it was published.
        let subscribed: Bool
        /// Its place among its topic's PUBLISHes.
        let sequence: Int
        var deliveries = 0

        init(frame: Int, stream: Int, time: Int64, length: Int, subscribed: Bool, sequence: Int) {
            self.sequence = sequence
            self.frame = frame
            self.stream = stream
            self.time = time
            self.length = length
            self.subscribed = subscribed
        }
    }

    struct TopicTotals {
        var publishes = 0
        var deliveries = 0
        var latency = LatencyHistogram()
        var undelivered = 0
        /// The retained message: its PUBLISH's frame and payload length; nil once cleared.
        var retained: (frame: Int, length: Int)?
    }

    /// Open connections' filters, by stream, with their No Local option (5.0: the connection's
    /// own PUBLISHes are not sent back to it), and when the connection first subscribed.
    private var filters = IntTable<(list: [(filter: String, noLocal: Bool)], since: Int64)>()
    /// The open subscriptions by filter: those without wildcards looked up by topic, the others
    /// matched one by one.
    private var exactFilters: [String: Int] = [:]
    private var wildcardFilters: [String: Int] = [:]
    /// PUBLISHes within the window, by topic, oldest first.
    private var pending: [String: [Pending]] = [:]
    /// Per topic: its next PUBLISH's place, and per subscriber connection the place of the
    /// first PUBLISH not yet delivered on it.
    private var sequences: [String: (next: Int, cursors: [Int: Int])] = [:]
    private var pendingCount = 0
    /// Topics with pending PUBLISHes, by the time of their oldest (for the window).
    private var expiry: [(time: Int64, topic: String)] = []
    private var expiryStart = 0
    private var topics: [String: TopicTotals] = [:]
    private var topicOrder: [String] = []
    private var undeliveredRecords: [AnalysisRecord] = []
    private var undeliveredTotal = 0
    private var now: Int64 = 0

    public init() {}

    public func reads(_ event: OutputEvent) -> Bool {
        switch event {
        case .pdu(let e):
            guard e.pdu.isProtocol("mqtt") else { return false }
            return e.pdu.withSummaryBytes { s in
                Self.starts(s, "PUBLISH") || (e.direction == .toServer && (Self.starts(s, "SUBSCRIBE") || Self.starts(s, "UNSUBSCRIBE")))
            }
        case .counted(let run):
            return run.protocolName == "mqtt" && run.pdus.contains { $0.kind == "PUBLISH" }
        case .connectionClosed(let c):
            return c.protocolName == "mqtt"
        default:
            return false
        }
    }

    private static func starts(_ s: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard s.count >= n, s.count == n || s[n] == 0x20 else { return false }
        return word.withUTF8Buffer { w in (0..<n).allSatisfy { s[$0] == w[$0] } }
    }

    public func observe(_ event: OutputEvent) {
        switch event {
        case .pdu(let e):
            let time = e.context.time.seconds &* 1_000_000_000 &+ Int64(e.context.time.nanoseconds)
            expire(before: time)
            if let packet = e.pdu.packet as? MQTTPacket {
                switch packet.content {
                case .publish(let p):
                    guard let topic = p.topicName, let payload = p.payload else { return }
                    published(topic, length: payload.length, retain: p.retain, direction: e.direction, stream: e.context.stream,
                              frame: e.context.frame, time: time)
                case .subscribe(let s):
                    for entry in s.subscriptions?.entries ?? [] {
                        subscribe(entry.filter.value, noLocal: packet.version == .v5 && entry.noLocal, stream: e.context.stream, at: time)
                    }
                case .unsubscribe(let u):
                    for f in u.filters?.entries ?? [] { unsubscribe(f.value, stream: e.context.stream) }
                default:
                    break
                }
            } else {
                let facts = e.pdu.summaryFacts
                guard facts.kind == "PUBLISH", let topic = facts.topic else { return }
                published(topic, length: facts.payloadLength ?? 0, retain: facts.retained, direction: e.direction,
                          stream: e.context.stream, frame: e.context.frame, time: time)
            }
        case .counted(let run):
            let time = run.context.time.seconds &* 1_000_000_000 &+ Int64(run.context.time.nanoseconds)
            expire(before: time)
            for pdu in run.pdus where pdu.kind == "PUBLISH" {
                guard let topic = pdu.topic else { continue }
                published(topic, length: pdu.payloadLength ?? 0, retain: pdu.retained, direction: run.direction,
                          stream: run.context.stream, frame: run.context.frame, time: time)
            }
        case .connectionClosed(let c):
            for entry in filters.removeValue(forKey: c.stream)?.list ?? [] { count(entry.filter, -1) }
        default:
            break
        }
    }

    // MARK: - Subscriptions

    private func subscribe(_ filter: String, noLocal: Bool, stream: Int, at time: Int64) {
        var entry = filters[stream] ?? ([], time)
        guard !entry.list.contains(where: { $0.filter == filter }), entry.list.count < Self.maxFilters else { return }
        entry.list.append((filter, noLocal))
        filters[stream] = entry
        count(filter, 1)
    }

    private func unsubscribe(_ filter: String, stream: Int) {
        guard var entry = filters[stream], entry.list.contains(where: { $0.filter == filter }) else { return }
        entry.list.removeAll { $0.filter == filter }
        filters[stream] = entry
        count(filter, -1)
    }

    /// One subscription more (or less) to `filter`, over the open connections.
    private func count(_ filter: String, _ change: Int) {
        let wild = filter.contains("+") || filter.contains("#") || filter.hasPrefix("$share/")
        if wild {
            let n = (wildcardFilters[filter] ?? 0) + change
            wildcardFilters[filter] = n > 0 ? n : nil
        } else {
            let n = (exactFilters[filter] ?? 0) + change
            exactFilters[filter] = n > 0 ? n : nil
        }
    }

    /// Whether an open connection subscribes to `topic` in a way that would deliver a PUBLISH
    /// of `publisher`'s (not only by its own No Local subscriptions).
    private func subscribed(_ topic: String, publisher: Int) -> Bool {
        var matching = exactFilters[topic] ?? 0
        for (filter, n) in wildcardFilters where Self.matches(filter: filter, topic: topic) { matching += n }
        guard matching > 0 else { return false }
        let own = filters[publisher]?.list.filter { $0.noLocal && ($0.filter == topic || Self.matches(filter: $0.filter, topic: topic)) }.count ?? 0
        return matching > own
    }

    /// Whether a topic filter matches a topic name (MQTT 3.1.1 §4.7, 5.0 §4.7): `+` one level,
    /// `#` the rest (and the parent level); a filter starting with a wildcard does not match a
    /// topic starting with `$`; `$share/NAME/` (5.0 shared subscriptions) is left out first.
    static func matches(filter: String, topic: String) -> Bool {
        var f = Substring(filter)
        if f.hasPrefix("$share/") {
            let rest = f.dropFirst(7)
            guard let slash = rest.firstIndex(of: "/") else { return false }
            f = rest[rest.index(after: slash)...]
        }
        if topic.hasPrefix("$"), f.hasPrefix("+") || f.hasPrefix("#") { return false }
        let fl = f.split(separator: "/", omittingEmptySubsequences: false)
        let tl = topic.split(separator: "/", omittingEmptySubsequences: false)
        var i = 0
        while i < fl.count {
            if fl[i] == "#" { return true }
            guard i < tl.count else { return false }
            if fl[i] != "+" && fl[i] != tl[i] { return false }
            i += 1
        }
        return i == tl.count
    }

    // MARK: - Publishes and deliveries

    private func published(_ topic: String, length: Int, retain: Bool, direction: Direction, stream: Int, frame: Int, time: Int64) {
        if direction == .toServer {
            guard topics[topic] != nil || topics.count < Self.maxTopics else { return }
            if topics[topic] == nil { topicOrder.append(topic) }
            topics[topic, default: TopicTotals()].publishes += 1
            if retain { topics[topic]!.retained = length == 0 ? nil : (frame, length) }
            guard pendingCount < Self.maxPending else { return }
            let sequence = sequences[topic]?.next ?? 0
            sequences[topic, default: (0, [:])].next = sequence + 1
            let p = Pending(frame: frame, stream: stream, time: time, length: length, subscribed: subscribed(topic, publisher: stream), sequence: sequence)
            if pending[topic]?.isEmpty ?? true { expiry.append((time, topic)) }
            pending[topic, default: []].append(p)
            pendingCount += 1
        } else {
            // The broker's stored message, sent on subscribing: not a new PUBLISH's delivery.
            if retain { return }
            guard let queue = pending[topic], let first = queue.first else { return }
            // Only what was published once the connection had subscribed.
            let since = filters[stream]?.since ?? Int64.max
            let cursor = max(sequences[topic]?.cursors[stream] ?? 0, first.sequence)
            var i = cursor - first.sequence
            while i < queue.count, queue[i].time <= time {
                let p = queue[i]
                if p.length == length && p.time >= since {
                    p.deliveries += 1
                    topics[topic]?.deliveries += 1
                    topics[topic]?.latency.record(Int((time - p.time) / 1000))
                    sequences[topic]?.cursors[stream] = p.sequence + 1
                    return
                }
                i += 1
            }
        }
    }

    /// Makes final the PUBLISHes older than the window before `time`.
    private func expire(before time: Int64) {
        now = max(now, time)
        while expiryStart < expiry.count, expiry[expiryStart].time < now - Self.window {
            let topic = expiry[expiryStart].topic
            expiryStart += 1
            guard var queue = pending[topic] else { continue }
            var k = 0
            while k < queue.count, queue[k].time < now - Self.window {
                final(queue[k], topic: topic)
                k += 1
            }
            queue.removeFirst(k)
            pendingCount -= k
            if queue.isEmpty {
                pending[topic] = nil
                // Cursors past every PUBLISH of the topic are of no more use.
                sequences[topic]?.cursors = [:]
            } else {
                pending[topic] = queue
                expiry.append((queue[0].time, topic))
            }
        }
        if expiryStart > 4096, expiryStart * 2 > expiry.count {
            expiry.removeFirst(expiryStart)
            expiryStart = 0
        }
    }

    private func final(_ p: Pending, topic: String) {
        guard p.deliveries == 0, p.subscribed else { return }
        topics[topic]?.undelivered += 1
        undeliveredTotal += 1
        guard undeliveredRecords.count < Self.maxUndeliveredRecords else { return }
        undeliveredRecords.append(AnalysisRecord(
            protocolName: "mqtt", kind: .undelivered, frames: [p.frame],
            message: "PUBLISH #\(p.frame) to \(topic) (stream \(p.stream)) reached no subscriber in the capture, though a subscription matching it was open",
            reference: "MQTT 3.1.1 §4.7, 5.0 §4.7",
            fields: [Field("topic", "Topic", .string(topic)), Field("stream", "Stream", .int(p.stream))]))
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        for (topic, queue) in pending { for p in queue { final(p, topic: topic) } }
        pending = [:]
        pendingCount = 0
        for r in undeliveredRecords { record(r) }
        if undeliveredTotal > undeliveredRecords.count {
            record(AnalysisRecord(protocolName: "mqtt", kind: .undelivered, frames: [],
                                  message: "\(undeliveredTotal - undeliveredRecords.count) more PUBLISHes reached no subscriber (records for the first \(Self.maxUndeliveredRecords) only)"))
        }
        for topic in topicOrder {
            guard let t = topics[topic], t.deliveries > 0 || t.undelivered > 0 || t.retained != nil else { continue }
            var fields = [Field("topic", "Topic", .string(topic)), Field("publishes", "PUBLISHes", .int(t.publishes)),
                          Field("deliveries", "Deliveries", .int(t.deliveries))]
            var message = "\(topic): \(t.publishes) PUBLISH\(t.publishes == 1 ? "" : "es"), \(t.deliveries) deliveries"
            if t.publishes > 0 {
                let fanOut = Double(t.deliveries) / Double(t.publishes)
                message += String(", fan-out \(Double(Int(fanOut * 100 + 0.5)) / 100)")
            }
            if let p50 = t.latency.percentile(50), let p99 = t.latency.percentile(99) {
                fields.append(Field("latency_us", "Latency (µs)", children: [
                    Field("p50", "p50", .int(p50)), Field("p99", "p99", .int(p99)), Field("max", "max", .int(t.latency.maximum))]))
                message += ", publish to delivery p50 \(latencyText(microseconds: p50)), max \(latencyText(microseconds: t.latency.maximum))"
            }
            if t.undelivered > 0 {
                fields.append(Field("undelivered", "Undelivered", .int(t.undelivered)))
                message += ", \(t.undelivered) reached no subscriber"
            }
            var frames: [Int] = []
            if let r = t.retained {
                fields.append(Field("retained_frame", "Retained Message In Frame", .int(r.frame)))
                message += "; retained: #\(r.frame) (\(r.length) bytes)"
                frames = [r.frame]
            }
            record(AnalysisRecord(protocolName: "mqtt", kind: .topicDelivery, frames: frames, message: message, fields: fields))
        }
    }
}
