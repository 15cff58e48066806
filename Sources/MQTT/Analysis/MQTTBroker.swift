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
/// delivery with RETAIN set is the broker's stored message, not a new one, unless it matches a
/// 5.0 subscription with Retain As Published (then a live PUBLISH keeps its RETAIN, §3.3.1.3).
///
/// Memory: each connection's filters (up to `maxFilters`), each topic's totals and retained
/// message (up to `maxTopics`), and the PUBLISHes awaiting deliveries: only those an open
/// subscription would deliver, each until it has had a delivery per such subscription or is
/// older than `window` seconds of capture time; past `maxPending` of them the oldest are made
/// final early (at 16,384 PUBLISHes awaiting deliveries, the window is shorter).
// Unchecked: `observe` and `finish` run on the caller's thread alone (SpanningAnalysis); `reads`,
// asked on the workers, reads nothing of it.
public final class MQTTBroker: SpanningAnalysis, @unchecked Sendable {
    /// The model's state and its steps, in a value: changed in place through one stored property
    /// (each stored property of a class, and of a class per topic, was checked for exclusive
    /// access at run time: 5% of an MQTT table's instructions).
    // One thread at a time (above), and no step reaches the model but through `observe` and `finish`.
    @exclusivity(unchecked) private var model: Model

    public init(links: MQTTFlowLinks? = nil) {
        model = Model(links: links)
    }

    public func observe(_ event: OutputEvent) {
        model.observe(event)
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        model.finish(record: record)
    }

    static let window: Int64 = 10_000_000_000
    static let maxPending = 16_384
    static let maxTopics = 65_536
    static let maxFilters = 1_024
    static let maxUndeliveredRecords = 1_000
    /// SUBSCRIBEs awaiting their SUBACK kept per connection.
    static let maxAwaitingSubacks = 16
    /// A PUBLISH delivered to every subscription counted is let go once this old (capture time):
    /// a copy on a connection the count missed (a subscription older than the capture) comes
    /// within it, and still finds it.
    static let completedGrace: Int64 = 1_000_000_000

    /// A client PUBLISH within the window, one that a subscription open when it was published
    /// would deliver: 40 bytes. Its place among its topic's PUBLISHes is its topic's
    /// `firstSequence` plus its index.
    struct Pending {
        var frame: Int
        var time: Int64
        var stream: Int32
        var length: Int32
        var deliveries: Int32 = 0
        /// Its place among the client's PUBLISHes in its frame (`MQTTFlowLinks.delivery`).
        var place: UInt16 = 0
        /// It was sent with RETAIN set (a live copy keeps it under Retain As Published).
        var retained = false
        /// The subscriptions that would deliver it when it was published: once it has had as many
        /// deliveries it is final (one connection with overlapping filters may get it once: then
        /// the window makes it final).
        var expected: Int32

        var complete: Bool { deliveries >= expected }
    }

    /// A topic: its totals, and its PUBLISHes within the window. Held in the model's list and
    /// named by its place there (found with one lookup per event and changed where it is).
    struct Topic {
        let name: String
        var publishes = 0
        var deliveries = 0
        var latency = LatencyHistogram()
        var undelivered = 0
        /// The retained message: its PUBLISH's frame and payload length; nil once cleared.
        var retained: (frame: Int, length: Int)?
        /// PUBLISHes within the window, oldest first, from `head` on.
        var queue: [Pending] = []
        var head = 0
        var nextSequence = 0
        /// The place of `queue[0]` among the topic's PUBLISHes.
        var firstSequence = 0
        /// Whether the topic is in the expiry list.
        var listed = false
        /// The open subscriptions whose filter matches the topic, as of the model's `generation`
        /// `matchedGeneration` (asked once a PUBLISH; counted again only when subscriptions change).
        var matched = 0
        var matchedGeneration = -1

        init(name: String) { self.name = name }

        var pendingCount: Int { queue.count - head }

        /// Lets go of the oldest PUBLISHes while they have had every delivery expected and are
        /// `completedGrace` old at `now`; how many went.
        mutating func dropCompleted(now: Int64) -> Int {
            let start = head
            while head < queue.count, queue[head].complete, now - queue[head].time >= MQTTBroker.completedGrace { head += 1 }
            let dropped = head - start
            compact()
            return dropped
        }

        /// Lets go of the entries before `head` once they are as many as those after it: the
        /// array holds at most about twice the PUBLISHes in the window (it kept up to 1,024 spent
        /// entries, 7.7 MB over the bench capture's 96 topics).
        mutating func compact() {
            if head == queue.count {
                queue.removeAll(keepingCapacity: queue.capacity <= 32)
                head = 0
                firstSequence = nextSequence
            } else if head >= 32, head * 2 >= queue.count {
                queue = Array(queue[head...])
                firstSequence += head
                head = 0
            }
        }
    }

    public func reads(_ event: OutputEvent) -> Bool {
        switch event {
        case .pdu(let e):
            guard e.pdu.isProtocol("mqtt") else { return false }
            return e.pdu.withSummaryBytes { s in
                Self.starts(s, "PUBLISH") || (e.direction == .toServer && (Self.starts(s, "SUBSCRIBE") || Self.starts(s, "UNSUBSCRIBE")
                    || Self.starts(s, "CONNECT"))) || (e.direction == .toClient && Self.starts(s, "SUBACK"))
            }
        case .counted(let run):
            // A run with a PUBLISH, its PDUs read in place (a copy of each retained its strings).
            guard run.protocolName == "mqtt" else { return false }
            return run.pdus.withUnsafeBufferPointer { pdus in
                pdus.indices.contains { pdus[$0].kind.utf8.count == 7 && pdus[$0].kind == "PUBLISH" }
            }
        case .connectionClosed(let c):
            return c.protocolName == "mqtt"
        default:
            return false
        }
    }

    /// A PUBLISH crosses to the caller's thread as a run of one counted PDU (its topic, payload
    /// length and retain flag: what `published` reads), not as its PDU with the field tree and
    /// the packet bytes it points into (bench JSON, two workers: peak about −1 MB).
    public func forwarded(_ event: OutputEvent) -> OutputEvent? {
        guard reads(event) else { return nil }
        guard case .pdu(let e) = event else { return event }
        var counted = CountedPDU(kind: "PUBLISH", wireLength: e.pdu.wireLength)
        if let packet = e.pdu.packet as? MQTTPacket {
            guard case .publish(let p) = packet.content else { return event }
            guard let topic = p.topicName, let payload = p.payload else { return event }
            counted.topic = topic
            counted.payloadLength = payload.length
            counted.retained = p.retain
        } else {
            let facts = e.pdu.summaryFacts
            guard facts.kind == "PUBLISH" else { return event }
            guard let topic = facts.topic else { return event }
            counted.topic = topic
            counted.payloadLength = facts.payloadLength ?? 0
            counted.retained = facts.retained
        }
        return .counted(CountedPDUs(e.context, e.direction, protocolName: "mqtt", [counted][...]))
    }

    private static func starts(_ s: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard s.count >= n, s.count == n || s[n] == 0x20 else { return false }
        return word.withUTF8Buffer { w in (0..<n).allSatisfy { s[$0] == w[$0] } }
    }

    /// Whether a connection that ended so (`MQTTConnectionWatch.end`'s words) fired its will
    /// (§3.1.2.5): closed or reset without a DISCONNECT, by either side, once its CONNECT was
    /// accepted. Not one still open when the capture ended, gone idle in it or let go at the
    /// connection limit: those endings are the reason alone (`end of capture`).
    public static func firesWill(_ ending: String) -> Bool {
        if ending.hasPrefix("broker ") { return !ending.contains("the CONNECT was refused") }
        return ending.hasSuffix("without DISCONNECT")
    }

    /// Whether a topic filter matches a topic name (MQTT 3.1.1 §4.7, 5.0 §4.7): `+` one level,
    /// `#` the rest (and the parent level); a filter starting with a wildcard does not match a
    /// topic starting with `$`; `$share/NAME/` (5.0 shared subscriptions) is left out first.
    static func matches(filter: String, topic: String) -> Bool {
        var filter = filter, topic = topic
        return filter.withUTF8 { f in topic.withUTF8 { t in matches(filter: f, topic: t) } }
    }

    /// `$share/`, made once (an array made per match was most of its cost).
    private static let sharePrefix = Array("$share/".utf8)

    /// A filter without its `$share/NAME/` (MQTT 5.0 §4.8.2, a shared subscription): the filter
    /// subscribed to; nil for `$share/NAME` with no slash after the name, which matches nothing.
    /// The matching here and the filter tree's both read filters through it.
    static func unshared<Bytes: Collection>(_ f: Bytes) -> Bytes? where Bytes.Element == UInt8, Bytes.SubSequence == Bytes {
        guard f.count > sharePrefix.count, f.starts(with: sharePrefix) else { return f }
        let rest = f.dropFirst(sharePrefix.count)
        guard let cut = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return rest[rest.index(after: cut)...]
    }

    /// `matches` over the bytes, level by level, with no array made (it runs per PUBLISH for
    /// each distinct wildcard filter open).
    static func matches(filter whole: UnsafeBufferPointer<UInt8>, topic t: UnsafeBufferPointer<UInt8>) -> Bool {
        let slash = UInt8(ascii: "/"), plus = UInt8(ascii: "+"), hash = UInt8(ascii: "#")
        guard let f = unshared(whole[...]) else { return false }
        if let c = t.first, c == UInt8(ascii: "$"), let w = f.first, w == plus || w == hash { return false }
        var i = f.startIndex, j = 0
        while true {
            // One level of each: f[i..<fe], t[j..<te].
            var fe = i
            while fe < f.endIndex, f[fe] != slash { fe += 1 }
            if fe - i == 1, f[i] == hash { return true }
            var te = j
            while te < t.count, t[te] != slash { te += 1 }
            if !(fe - i == 1 && f[i] == plus) {
                guard fe - i == te - j, (0..<(fe - i)).allSatisfy({ f[i + $0] == t[j + $0] }) else { return false }
            }
            let fEnd = fe == f.endIndex, tEnd = te == t.count
            if fEnd && tEnd { return true }
            if tEnd {
                // The topic ends here: only a last level of `#` still matches (the parent level).
                return fe + 2 == f.endIndex && f[fe + 1] == hash
            }
            if fEnd { return false }
            i = fe + 1
            j = te + 1
        }
    }
}

extension MQTTBroker {
    /// The model's state, and its steps on each event (see `MQTTBroker`).
    struct Model {
        /// Open connections' filters, by stream, with their No Local option (5.0: the connection's
        /// own PUBLISHes are not sent back to it), and when the connection first subscribed.
        private var filters = IntTable<(list: [Subscription], since: Int64)>()
        /// A filter a connection subscribed to, with its 5.0 options the model reads.
        struct Subscription {
            var filter: String
            /// No Local: the connection's own PUBLISHes are not sent back to it.
            var noLocal: Bool
            /// Retain As Published: a live PUBLISH is forwarded with the RETAIN flag it was sent with
            /// (MQTT 5.0 §3.8.3.1), not cleared.
            var retainAsPublished: Bool
        }
        /// Per connection, the SUBSCRIBEs awaiting their SUBACK: packet identifier and filters, in
        /// order (at most `maxAwaitingSubacks`): a filter the SUBACK refuses (0x80 and up) is no
        /// subscription (3.1.1 §3.9.3, 5.0 §3.9.3).
        private var awaitingSubacks = IntTable<[(packetID: Int, filters: [String])]>()
        /// Per subscriber connection and topic, the place of the first PUBLISH of the topic not yet
        /// delivered on it; let go with the connection.
        private var cursors = IntTable<[Int: Int]>()
        /// The open subscriptions by filter: those without wildcards looked up by topic, the others
        /// counted by their levels.
        private var exactFilters: [String: Int] = [:]
        private var wildcardFilters = MQTTFilterTree()
        /// Changes whenever a filter's count does (a topic's `matched` is then counted again).
        private var generation = 0
        private var pendingCount = 0
        /// Topics with pending PUBLISHes, by the time of their oldest (for the window).
        private var expiry: [(time: Int64, topic: Int)] = []
        private var expiryStart = 0
        private var topics: [String: Int] = [:]
        /// `topics` by the very String a connection's decoder made for the name (the same one for
        /// each of its PUBLISHes to it): most lookups read no byte of the name (a lookup in
        /// `topics` hashed it and compared it with two or three others).
        private var topicCache = StringWordsCache<Int>(slots: 1024)
        /// Each topic, in the order first seen (`topics` gives a name's place here).
        private var topicList: [Topic] = []
        /// The first `maxUndeliveredRecords` PUBLISHes that reached no subscriber, made records at
        /// the end (24 bytes each, not a record's strings and fields for the whole run).
        private var undelivered: [(frame: Int, stream: Int32, topic: Int)] = []
        /// The will of each open connection that has one: its topic and client id.
        private var wills = IntTable<Will>()
        /// An open connection's will: its topic, its payload's length, the client's id, and the
        /// broker's PUBLISHes of it seen before the capture showed the connection's end (a broker
        /// that closes a silent client publishes its will at once, while the client's side of the
        /// connection may end in the capture much later, or never).
        struct Will {
            var topic: String
            var length: Int
            var client: String
            var early: [(frame: Int, stream: Int, time: Int64)] = []
        }
        /// The streams of the open connections with a will, by its topic.
        private var willsByTopic: [String: [Int]] = [:]
        /// Wills due: connections that ended without a DISCONNECT, and the deliveries of them seen.
        struct FiredWill {
            var topic: String
            var client: String
            var stream: Int
            var time: Int64
            /// The will's payload length.
            var length: Int
            /// Each delivery's frame and connection, and its time after the client's last packet (nil
            /// for a delivery seen before the capture showed the connection's end).
            var deliveries: [(frame: Int, stream: Int, latency: Int?)] = []
        }
        private var firedWills: [FiredWill] = []
        private var undeliveredTotal = 0
        private var now: Int64 = 0

        /// A run in two passes, the first: each delivery matched is written into these.
        private let links: MQTTFlowLinks?
        /// The last client PUBLISH seen: its connection, frame and place in the frame.
        private var lastPublish = (stream: -1, frame: -1, place: 0)

        init(links: MQTTFlowLinks?) {
            self.links = links
        }

        /// The place of the topic `name` in `topicList`, if it has one.
        private mutating func topicIndex(_ name: String) -> Int? {
            if let t = topicCache.value(for: name) { return t }
            guard let t = topics[name] else { return nil }
            topicCache.remember(name, t)
            return t
        }

        mutating func observe(_ event: OutputEvent) {
            switch event {
            case .pdu(let e):
                let time = e.context.time.nanosecondsSince1970
                expire(before: time)
                if let packet = e.pdu.packet as? MQTTPacket {
                    switch packet.content {
                    case .publish(let p):
                        let place = place(ofPublishIn: e.context.frame, stream: e.context.stream, direction: e.direction)
                        guard let topic = p.topicName, let payload = p.payload else { return }
                        published(topic, length: payload.length, retain: p.retain, direction: e.direction, stream: e.context.stream,
                                  frame: e.context.frame, place: place, time: time)
                    case .subscribe(let s):
                        let entries = s.subscriptions?.entries ?? []
                        for entry in entries {
                            subscribe(Subscription(filter: entry.filter.value, noLocal: packet.version == .v5 && entry.noLocal,
                                                   retainAsPublished: packet.version == .v5 && entry.retainAsPublished),
                                      stream: e.context.stream, at: time)
                        }
                        if let id = s.packetID?.value, !entries.isEmpty {
                            var awaiting = awaitingSubacks[e.context.stream] ?? []
                            if awaiting.count >= MQTTBroker.maxAwaitingSubacks { awaiting.removeFirst() }
                            awaiting.append((id, entries.map(\.filter.value)))
                            awaitingSubacks[e.context.stream] = awaiting
                        }
                    case .suback(let a):
                        guard let id = a.packetID?.value, var awaiting = awaitingSubacks[e.context.stream],
                              let i = awaiting.firstIndex(where: { $0.packetID == id }) else { break }
                        let asked = awaiting.remove(at: i).filters
                        awaitingSubacks[e.context.stream] = awaiting
                        for (filter, code) in zip(asked, (a.codes?.entries ?? []).map(\.value)) where code >= 0x80 {
                            unsubscribe(filter, stream: e.context.stream)
                        }
                    case .unsubscribe(let u):
                        for f in u.filters?.entries ?? [] { unsubscribe(f.value, stream: e.context.stream) }
                    case .connect(let c):
                        if c.willFlag, let topic = c.willTopic?.value {
                            // A second CONNECT (a protocol violation) replaces the first's will.
                            if let old = wills[e.context.stream] { forgetWill(old.topic, of: e.context.stream) }
                            willsByTopic[topic, default: []].append(e.context.stream)
                            wills[e.context.stream] = Will(topic: topic, length: c.willPayload?.value.count ?? 0, client: c.clientID?.value ?? "")
                        }
                    default:
                        break
                    }
                } else {
                    let facts = e.pdu.summaryFacts
                    guard facts.kind == "PUBLISH" else { return }
                    let place = place(ofPublishIn: e.context.frame, stream: e.context.stream, direction: e.direction)
                    guard let topic = facts.topic else { return }
                    published(topic, length: facts.payloadLength ?? 0, retain: facts.retained, direction: e.direction,
                              stream: e.context.stream, frame: e.context.frame, place: place, time: time)
                }
            case .counted(let run):
                let time = run.context.time.nanosecondsSince1970
                expire(before: time)
                run.pdus.withUnsafeBufferPointer { pdus in
                    for i in pdus.indices {
                        let pdu = pdus.baseAddress! + i
                        guard pdu.pointee.kind.utf8.count == 7, pdu.pointee.kind == "PUBLISH" else { continue }
                        let place = place(ofPublishIn: run.context.frame, stream: run.context.stream, direction: run.direction)
                        guard let topic = pdu.pointee.topic else { continue }
                        published(topic, length: pdu.pointee.payloadLength ?? 0, retain: pdu.pointee.retained, direction: run.direction,
                                  stream: run.context.stream, frame: run.context.frame, place: place, time: time)
                    }
                }
            case .connectionClosed(let c):
                for entry in filters.removeValue(forKey: c.stream)?.list ?? [] { count(entry.filter, -1) }
                cursors.removeValue(forKey: c.stream)
                awaitingSubacks.removeValue(forKey: c.stream)
                guard let will = wills.removeValue(forKey: c.stream) else { break }
                forgetWill(will.topic, of: c.stream)
                // A will is published when the connection ends without a DISCONNECT (§3.1.2.5).
                if let ending = c.ending, MQTTBroker.firesWill(ending) {
                    let end = c.lastSeen.nanosecondsSince1970
                    if firedWills.count < MQTTBroker.maxUndeliveredRecords {
                        var fired = FiredWill(topic: will.topic, client: will.client, stream: c.stream, time: end, length: will.length)
                        fired.deliveries = will.early.filter { end - $0.time <= MQTTBroker.window }.map { ($0.frame, $0.stream, nil) }
                        firedWills.append(fired)
                    }
                }
            default:
                break
            }
        }

        private mutating func forgetWill(_ topic: String, of stream: Int) {
            willsByTopic[topic]?.removeAll { $0 == stream }
            if willsByTopic[topic]?.isEmpty == true { willsByTopic[topic] = nil }
        }

        // MARK: - Subscriptions

        private mutating func subscribe(_ subscription: Subscription, stream: Int, at time: Int64) {
            var entry = filters[stream] ?? ([], time)
            // A second SUBSCRIBE of a filter replaces its options (§3.8.4).
            if let i = entry.list.firstIndex(where: { $0.filter == subscription.filter }) {
                entry.list[i] = subscription
                filters[stream] = entry
                return
            }
            guard entry.list.count < MQTTBroker.maxFilters else { return }
            entry.list.append(subscription)
            filters[stream] = entry
            count(subscription.filter, 1)
        }

        private mutating func unsubscribe(_ filter: String, stream: Int) {
            guard var entry = filters[stream], entry.list.contains(where: { $0.filter == filter }) else { return }
            entry.list.removeAll { $0.filter == filter }
            filters[stream] = entry
            count(filter, -1)
        }

        /// One subscription more (or less) to `filter`, over the open connections.
        private mutating func count(_ filter: String, _ change: Int) {
            generation &+= 1
            // Bytes, not `String.contains` (a substring search, thousands of instructions a call).
            var wild = false
            for b in filter.utf8 where b == UInt8(ascii: "+") || b == UInt8(ascii: "#") || b == UInt8(ascii: "$") {
                wild = true
                break
            }
            if wild { wildcardFilters.add(change, to: filter) } else { Self.add(change, to: filter, in: &exactFilters) }
        }

        /// `change` added to a filter's count, the filter dropped at zero: one lookup of the string
        /// when the filter is there (three before).
        private static func add(_ change: Int, to filter: String, in counts: inout [String: Int]) {
            if let i = counts.index(forKey: filter) {
                counts.values[i] += change
                if counts.values[i] <= 0 { counts.remove(at: i) }
            } else if change > 0 {
                counts[filter] = change
            }
        }

        /// The open subscriptions that would deliver a PUBLISH of `publisher`'s to `topic` (not its
        /// own No Local ones).
        private mutating func subscriptions(delivering t: Int, publisher: Int) -> Int {
            let name = topicList[t].name
            if topicList[t].matchedGeneration != generation {
                topicList[t].matched = (exactFilters[name] ?? 0) + wildcardFilters.count(matching: name)
                topicList[t].matchedGeneration = generation
            }
            let matched = topicList[t].matched
            guard matched > 0 else { return 0 }
            let own = filters[publisher]?.list.filter { $0.noLocal && ($0.filter == name || MQTTBroker.matches(filter: $0.filter, topic: name)) }.count ?? 0
            return max(0, matched - own)
        }

        // MARK: - Publishes and deliveries

        private mutating func published(_ name: String, length: Int, retain: Bool, direction: Direction, stream: Int, frame: Int, place: Int,
                               time: Int64) {
            if direction == .toServer {
                let t: Int
                if let known = topicIndex(name) {
                    t = known
                } else {
                    guard topics.count < MQTTBroker.maxTopics else { return }
                    t = topicList.count
                    topicList.append(Topic(name: name))
                    topics[name] = t
                }
                topicList[t].publishes += 1
                if retain { topicList[t].retained = length == 0 ? nil : (frame, length) }
                // Only a PUBLISH that an open subscription would deliver can be matched to deliveries
                // (a connection's are matched from its SUBSCRIBE on).
                let expected = subscriptions(delivering: t, publisher: stream)
                guard expected > 0 else { return }
                // Past the limit, the oldest PUBLISHes are made final early (memory stays flat).
                if pendingCount >= MQTTBroker.maxPending { expire(before: now, keeping: MQTTBroker.maxPending - 1) }
                topicList[t].queue.append(Pending(frame: frame, time: time, stream: Int32(truncatingIfNeeded: stream),
                                           length: Int32(truncatingIfNeeded: length), place: UInt16(truncatingIfNeeded: place),
                                           retained: retain, expected: Int32(truncatingIfNeeded: min(expected, Int(Int32.max)))))
                topicList[t].nextSequence += 1
                pendingCount += 1
                pendingCount -= topicList[t].dropCompleted(now: now)
                if !topicList[t].listed {
                    topicList[t].listed = true
                    expiry.append((time, t))
                }
            } else {
                // A will due on this topic: the broker's PUBLISH of it, within the window after the end.
                if !firedWills.isEmpty,
                   let w = firedWills.lastIndex(where: { $0.topic == name && $0.length == length && $0.time <= time && time - $0.time <= MQTTBroker.window }),
                   firedWills[w].deliveries.count < 64, !firedWills[w].deliveries.contains(where: { $0.stream == stream }) {
                    firedWills[w].deliveries.append((frame, stream, Int((time - firedWills[w].time) / 1000)))
                    return
                }
                // The broker's stored message, sent on subscribing: not a new PUBLISH's delivery;
                // unless a subscription it matches asked for Retain As Published (5.0), under which a
                // live PUBLISH keeps the RETAIN it was sent with (then only a retained one matches).
                if retain, !(filters[stream]?.list.contains { $0.retainAsPublished && MQTTBroker.matches(filter: $0.filter, topic: name) } ?? false) {
                    return
                }
                if deliver(name, length: length, retain: retain, stream: stream, time: time) { return }
                // Neither: maybe the will of a connection the capture still shows open, linked if
                // that connection ends so that it fires.
                if !willsByTopic.isEmpty, let streams = willsByTopic[name] {
                    for s in streams where s != stream {
                        wills.modify(s) { will in
                            guard will.length == length, will.early.count < 64, !will.early.contains(where: { $0.stream == stream }) else { return }
                            will.early.append((frame, stream, time))
                        }
                    }
                }
            }
        }

        /// Matches a broker PUBLISH on a subscriber's connection to the client PUBLISH it delivers;
        /// false when none.
        private mutating func deliver(_ name: String, length: Int, retain: Bool, stream: Int, time: Int64) -> Bool {
            guard let t = topicIndex(name), topicList[t].pendingCount > 0 else { return false }
            // Only what was published once the connection had subscribed.
            let since = filters[stream]?.since ?? Int64.max
            let head = topicList[t].head
            let first = topicList[t].firstSequence + head
            var i: Int
            if let cursor = cursors[stream]?[t] {
                i = head + max(cursor, first) - first
            } else {
                // A connection's first delivery of the topic: from the first PUBLISH since it
                // subscribed (the queue is in capture order), found by halving.
                var low = head, high = topicList[t].queue.count
                while low < high {
                    let mid = (low + high) / 2
                    if topicList[t].queue[mid].time < since { low = mid + 1 } else { high = mid }
                }
                i = low
            }
            let length = Int32(truncatingIfNeeded: length)
            // The queue is read where it is: a copy held here would make the change below copy it.
            while i < topicList[t].queue.count, topicList[t].queue[i].time <= time {
                let p = topicList[t].queue[i]
                if p.length == length && p.time >= since && (!retain || p.retained) {
                    topicList[t].queue[i].deliveries += 1
                    topicList[t].deliveries += 1
                    let latency = Int((time - p.time) / 1000)
                    topicList[t].latency.record(latency)
                    links?.delivered(stream: Int(p.stream), frame: p.frame, place: Int(p.place), latency: latency)
                    let next = topicList[t].firstSequence + i + 1
                    if cursors[stream] == nil { cursors[stream] = [:] }
                    cursors.modify(stream) { $0[t] = next }
                    // Delivered to every subscription: final, and let go once it is the oldest.
                    pendingCount -= topicList[t].dropCompleted(now: now)
                    return true
                }
                i += 1
            }
            return false
        }

        /// A client PUBLISH's place among the client's PUBLISHes in its frame (0 for the first),
        /// counting every one, as the dissector of the second pass of two counts them; 0 for the
        /// broker's.
        private mutating func place(ofPublishIn frame: Int, stream: Int, direction: Direction) -> Int {
            guard direction == .toServer else { return 0 }
            if lastPublish.stream == stream, lastPublish.frame == frame {
                lastPublish.place += 1
            } else {
                lastPublish = (stream, frame, 0)
            }
            return lastPublish.place
        }

        /// Makes final the PUBLISHes older than the window before `time`, and with `keeping`, the
        /// oldest ones until no more than that many are left.
        private mutating func expire(before time: Int64, keeping: Int = .max) {
            now = max(now, time)
            let limit = keeping < pendingCount ? Int64.max : now - MQTTBroker.window
            while expiryStart < expiry.count, expiry[expiryStart].time < limit, pendingCount > 0 {
                if keeping < Int.max && pendingCount <= keeping { break }
                let t = expiry[expiryStart].topic
                expiryStart += 1
                while topicList[t].head < topicList[t].queue.count, topicList[t].queue[topicList[t].head].time < limit,
                      pendingCount > keeping || keeping == .max {
                    final(topicList[t].queue[topicList[t].head], topic: t)
                    topicList[t].head += 1
                    pendingCount -= 1
                }
                topicList[t].compact()
                if topicList[t].queue.isEmpty {
                    topicList[t].listed = false
                } else {
                    expiry.append((topicList[t].queue[topicList[t].head].time, t))
                }
            }
            if expiryStart > 4096, expiryStart * 2 > expiry.count {
                expiry.removeFirst(expiryStart)
                expiryStart = 0
            }
        }

        private mutating func final(_ p: Pending, topic t: Int) {
            guard p.deliveries == 0 else { return }
            topicList[t].undelivered += 1
            undeliveredTotal += 1
            guard undelivered.count < MQTTBroker.maxUndeliveredRecords else { return }
            undelivered.append((p.frame, p.stream, t))
        }

        mutating func finish(record: (AnalysisRecord) -> Void) {
            for t in topicList.indices {
                for p in topicList[t].queue[topicList[t].head...] { final(p, topic: t) }
                topicList[t].queue = []
                topicList[t].head = 0
            }
            pendingCount = 0
            for (frame, stream, t) in undelivered {
                let topic = topicList[t]
                record(AnalysisRecord(
                    protocolName: "mqtt", kind: .undelivered, frames: [frame],
                    message: "PUBLISH #\(frame) to \(topic.name) (stream \(stream)) reached no subscriber in the capture, though a subscription matching it was open",
                    reference: "MQTT 3.1.1 §4.7, 5.0 §4.7",
                    fields: [Field("topic", "Topic", .string(topic.name)), Field("stream", "Stream", .int(Int(stream)))]))
            }
            for w in firedWills where !w.deliveries.isEmpty {
                let when = w.deliveries[0].latency.map { "the first \(latencyText(microseconds: $0)) after the client's last packet" }
                    ?? "the first before the capture shows the connection's end"
                record(AnalysisRecord(
                    protocolName: "mqtt", kind: .willPublished, frames: w.deliveries.map(\.frame),
                    message: "The will of \(w.client.isEmpty ? "the client" : w.client) (stream \(w.stream), ended without a DISCONNECT) was published to \(w.topic): delivered on \(w.deliveries.count) connection\(w.deliveries.count == 1 ? "" : "s"), \(when)",
                    reference: "MQTT 3.1.1 §3.1.2.5, 5.0 §3.1.2.5",
                    fields: [Field("client_id", "Client ID", .string(w.client)), Field("topic", "Topic", .string(w.topic)),
                             Field("stream", "Stream", .int(w.stream))]))
            }
            if undeliveredTotal > undelivered.count {
                record(AnalysisRecord(protocolName: "mqtt", kind: .undelivered, frames: [],
                                      message: "\(undeliveredTotal - undelivered.count) more PUBLISHes reached no subscriber (records for the first \(MQTTBroker.maxUndeliveredRecords) only)"))
            }
            for t in topicList {
                let topic = t.name
                guard t.deliveries > 0 || t.undelivered > 0 || t.retained != nil else { continue }
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
}
