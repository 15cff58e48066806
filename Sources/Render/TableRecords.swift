import Dissection

/// A table's input as bytes, passed from one thread to another. In a run in lanes
/// (`Pipeline.runInLanes`) each lane dissects its own connections on its own thread; a table sums
/// every connection, and counting into two tables merged at the end would have to apply the row
/// limits and the "first seen" rules across them. Instead the second lane writes what a table
/// counts of each event as a record (`TableRecordWriter`), and the one `TableRenderer`, on the
/// caller's thread, counts the records in their place among the first lane's events
/// (`TableRecordReader`): the tables are those one renderer makes from the events themselves.
///
/// Only bytes cross: strings a table counts by (kinds, topics, queues, exchanges, routing keys)
/// are written once, then named by number; a connection's endpoints go with its first record
/// from the lane. Passing references to the events' facts instead cost more than it saved: every
/// PDU's facts and endpoints were made on one core and read and freed on the other.
enum TableRecord {
    enum Tag: UInt8 {
        /// A PDU the second lane added to a sum: only its weight, by which the lanes are balanced.
        case counted = 0
        /// A string named by the next number.
        case string = 1
        case pdu = 2
        /// A note's problem.
        case problem = 3
        case closed = 4
        /// PDUs that count alike, summed (`TableRenderer.RepeatedPDUs`).
        case repeated = 5
    }

    /// Which optional facts a PDU record carries, in this order after its fixed part.
    struct Present: OptionSet {
        let rawValue: UInt16
        static let topic = Present(rawValue: 1 << 0)
        static let payloadLength = Present(rawValue: 1 << 1)
        static let qos = Present(rawValue: 1 << 2)
        /// No value: the bit is the flag.
        static let retained = Present(rawValue: 1 << 3)
        static let clientID = Present(rawValue: 1 << 4)
        static let connectVersion = Present(rawValue: 1 << 5)
        static let version = Present(rawValue: 1 << 6)
        static let channel = Present(rawValue: 1 << 7)
        static let queue = Present(rawValue: 1 << 8)
        static let ackedCount = Present(rawValue: 1 << 9)
        static let identity = Present(rawValue: 1 << 10)
        static let message = Present(rawValue: 1 << 11)
        static let close = Present(rawValue: 1 << 12)
        static let problems = Present(rawValue: 1 << 13)
        /// The connection's endpoints and protocol: the lane's first record of it.
        static let introduction = Present(rawValue: 1 << 14)
        static let toClient = Present(rawValue: 1 << 15)
    }

    /// The most bytes a PDU record's fixed-width part takes: tag, flags, stream, time, kind, and
    /// topic, payload length, QoS, channel, queue and acknowledged count when present.
    static let maxFixedPart = 1 + 2 + 8 + 13 + 4 + 4 + 8 + 8 + 8 + 4 + 8

    /// Strings named by number at most, and their bytes at most: past either, a string is
    /// written in full each time, so both threads' tables of names stay bounded however many
    /// distinct topics a capture has. Longer strings are always written in full (an MQTT topic can
    /// be 64 KB).
    static let maxNamedStrings = 16_384
    static let maxNamedBytes = 1 << 20
    static let maxNamedLength = 256
    /// Connections remembered as introduced at most: past it, the set is emptied (a connection
    /// that moves to the caller's lane and closes there is never seen closing here), and a
    /// connection introduced again only repeats its endpoints.
    static let maxIntroduced = 4_096
    /// Sums of PDUs kept by the writer at most, over all connections: past it, all are written.
    static let maxRepeats = 4_096
    /// Queues by kind, and exchanges by routing key, remembered as counted at most (each): past
    /// it, the set is emptied (their next PDU is then written in full again). Topics are kept as
    /// a bit per string number, bounded by `maxNamedStrings`.
    static let maxCounted = 1 << 16
    /// The number that says "written in full, here".
    static let inline = UInt32.max
}

/// Writes records of a table's input into the second lane's bytes: one writer per run, used by
/// the lane's thread alone.
public final class TableRecordWriter {
    /// A string as a key (`DigestKey`: hashed by FNV-1a, as the table's topic rows are).
    private typealias Key = DigestKey

    // The lane's thread alone.
    @exclusivity(unchecked) private var numbers: [Key: UInt32] = [:]
    /// The strings numbered lately, by their digest's low bits: most lookups end here, with one
    /// digest and one comparison (equal strings made from the same literal compare at once).
    @exclusivity(unchecked) private var recent = [(digest: UInt64, number: UInt32, name: String)](repeating: (0, 0, ""), count: recentSlots)
    private static let recentSlots = 1024
    /// The numbers of strings named lately, by their Strings (kinds are nearly always the very
    /// strings named before: literals, a method spec's name).
    @exclusivity(unchecked) private var sameStrings = StringWordsCache<UInt32>(slots: 64)
    /// Connections whose endpoints went with a record already (forgotten when they close).
    @exclusivity(unchecked) private var introduced: Set<Int> = []
    @exclusivity(unchecked) private var lastIntroduced = -1
    /// Bytes of the strings named so far.
    @exclusivity(unchecked) private(set) var namedBytes = 0

    /// What a sum of PDUs that count alike is kept by: within one connection, its kind, channel,
    /// and (by string number) its topic, queue and message. `flags`: which are present.
    struct RepeatKey: DigestHashed {
        var kind: UInt32
        var channel: Int
        var topic: UInt32
        var queue: UInt32
        var method: UInt32
        var exchange: UInt32
        var routingKey: UInt32
        var flags: UInt8

        static let hasTopic: UInt8 = 1, hasQueue: UInt8 = 2, hasMessage: UInt8 = 4
        static let hasMethod: UInt8 = 8, hasExchange: UInt8 = 16, hasRoutingKey: UInt8 = 32

        /// One word mixed from the fields, which a `DigestTable` probes by.
        var digest: UInt64 {
            var h = UInt64(kind) &* 0x9E37_79B9_7F4A_7C15
            h = (h ^ UInt64(UInt(bitPattern: channel))) &* 0xBF58_476D_1CE4_E5B9
            h = (h ^ UInt64(topic) ^ UInt64(queue) << 32) &* 0x94D0_49BB_1331_11EB
            return (h ^ UInt64(method) ^ UInt64(exchange) << 21 ^ UInt64(routingKey) << 42 ^ UInt64(flags) << 56) &* 0x9E37_79B9_7F4A_7C15
        }
    }

    /// The sums of one key: how many PDUs, the last one's time, and what their rows add up.
    struct Repeat {
        var count = 0
        var time: Timestamp
        var payloadBytes = 0
        var qos = (0, 0, 0)
        var retained = 0
        var acked = 0
        var bodyBytes = 0
    }

    /// A connection as the lane has counted it: the kinds its own records counted (a sum of a
    /// kind comes only after one), and its sums not yet written.
    final class LaneConnection {
        @exclusivity(unchecked) var kinds: [UInt32] = []
        @exclusivity(unchecked) var repeats = DigestTable<RepeatKey, Repeat>()
    }

    /// The connections the lane counts, by stream; the last one looked up.
    @exclusivity(unchecked) private var laneConnections: [Int: LaneConnection] = [:]
    @exclusivity(unchecked) private var lastLane: (stream: Int, connection: LaneConnection)?
    /// Sums kept over all connections.
    @exclusivity(unchecked) private var repeatCount = 0
    /// Topics (by number) a PUBLISH record of its own counted; queues by kind, and exchanges by
    /// routing key (of a publish), likewise: their rows were made then, or the rows were full.
    /// By string number, a bit each (numbers are dense, below `maxNamedStrings`).
    @exclusivity(unchecked) private var countedTopics: [UInt64] = []
    @exclusivity(unchecked) private var countedQueues: Set<UInt64> = []
    @exclusivity(unchecked) private var countedExchanges: Set<UInt64> = []

    /// Connections remembered as introduced (for the tests: it stays bounded).
    var introducedCount: Int { introduced.count }
    /// PDUs added to a sum rather than written in full (for the tests).
    @exclusivity(unchecked) private(set) var summedPDUs = 0
    /// Sums kept now (for the tests: all written by the end).
    var keptRepeats: Int { repeatCount }
    /// The most sums, and the most connections the lane kept state for, at any one time (for
    /// the tests: both stay within their bounds).
    @exclusivity(unchecked) private(set) var peakRepeats = 0
    @exclusivity(unchecked) private(set) var peakLaneConnections = 0

    /// The bounds of `TableRecord` (tests make them small).
    private let maxNamedStrings: Int, maxNamedBytes: Int, maxNamedLength: Int, maxIntroduced: Int, maxRepeats: Int

    public convenience init() { self.init(maxNamedStrings: TableRecord.maxNamedStrings) }

    init(maxNamedStrings: Int, maxNamedBytes: Int = TableRecord.maxNamedBytes, maxNamedLength: Int = TableRecord.maxNamedLength,
         maxIntroduced: Int = TableRecord.maxIntroduced, maxRepeats: Int = TableRecord.maxRepeats) {
        self.maxNamedStrings = maxNamedStrings
        self.maxNamedBytes = maxNamedBytes
        self.maxNamedLength = maxNamedLength
        self.maxIntroduced = maxIntroduced
        self.maxRepeats = maxRepeats
    }

    /// Writes the record of what `TableRenderer.render` would count of `event`.
    public func write(_ event: OutputEvent, into sink: inout ByteSink) {
        switch event {
        case .pdu(let event):
            let pdu = event.pdu
            writePDU(pdu.summaryFacts, problems: pdu.problems, protocolName: pdu.protocolName, context: event.context,
                     direction: event.direction, into: &sink)
        case .counted(let run):
            run.forEachInPlace { pdu in
                writePDU(pdu, problems: [], protocolName: run.protocolName, context: run.context, direction: run.direction,
                         into: &sink)
            }
        case .streamNote(_, let p), .captureNote(let p):
            sink.append(byte: TableRecord.Tag.problem.rawValue)
            Self.string(p.code.rawValue, into: &sink)
            Self.string(p.description, into: &sink)
        case .connectionClosed(let c):
            // Its sums count before its end (which sets its times); then it is forgotten.
            flushRepeats(of: c.stream, into: &sink)
            laneConnections[c.stream] = nil
            if lastLane?.stream == c.stream { lastLane = nil }
            introduced.remove(c.stream)
            if lastIntroduced == c.stream { lastIntroduced = -1 }
            sink.append(byte: TableRecord.Tag.closed.rawValue)
            Self.raw(Int64(c.stream), into: &sink)
            Self.string(c.client, into: &sink)
            Self.string(c.server, into: &sink)
            Self.string(c.protocolName, into: &sink)
            Self.time(c.firstSeen, into: &sink)
            Self.time(c.lastSeen, into: &sink)
            Self.raw(Int64(c.bytesToServer), into: &sink)
            Self.raw(Int64(c.bytesToClient), into: &sink)
        }
    }

    /// The record of one PDU (a box's facts and problems, or a counted PDU's facts).
    private func writePDU<Facts: TableFacts>(_ facts: Facts, problems: [Problem], protocolName: @autoclosure () -> String,
                                             context ctx: StreamContext, direction: Direction, into sink: inout ByteSink) {
        // Few PDUs have any of a message, an identity or a close: one question spares the three.
        let rare = facts.hasIdentityMessageOrClose
        // Strings first: a string's number is given before the record that uses it.
        let kind = number(facts.kind, into: &sink)
        let topic = facts.topic.map { number($0, into: &sink) }
        let queue = facts.queue.map { number($0, into: &sink) }
        // The rare facts are looked at only when there are any: an optional struct of
        // strings, even nil, is destroyed through the runtime's generic value witnesses.
        // A message's strings' numbers, when it has one.
        var messageNumbers: (UInt32?, UInt32?, UInt32?)?
        var hasIdentity = false, hasClose = false
        if rare {
            if let m = facts.message {
                messageNumbers = (m.method.map { number($0, into: &sink) }, m.exchange.map { number($0, into: &sink) },
                                  m.routingKey.map { number($0, into: &sink) })
            }
            hasIdentity = facts.identity != nil
            hasClose = facts.close != nil
        }
        let payloadLength = facts.payloadLength, qos = facts.qos, channel = facts.channel, ackedCount = facts.ackedCount
        let clientID = facts.clientID, connectVersion = facts.connectVersion, version = facts.version
        let isPublish = TableRenderer.kind(facts.kind, is: "PUBLISH")
        // Whether the table counts the PDU in its queue's row.
        let settles = queue != nil && TableRenderer.QueueEffect(kind: facts.kind) != nil
        let publishes = messageNumbers != nil && facts.message?.method == "basic.publish"
        // A PDU that counts as one before it did (its connection, kind, topic, queue and
        // exchange each counted by a record of their own) is added to a sum, and only its
        // weight written here (what the lanes are balanced by); anything else, in full.
        // (Its connection was introduced by the record that counted its kind: `addRepeat`
        // takes a kind the connection's own records counted, in this writer.)
        if problems.isEmpty, !hasIdentity, !hasClose, clientID == nil, connectVersion == nil, version == nil,
           let key = repeatKey(kind: kind, channel: channel, topic: isPublish ? topic : nil, isPublish: isPublish,
                               queue: queue, settles: settles, message: messageNumbers, publishes: publishes),
           addRepeat(key, stream: ctx.stream, time: ctx.time, payloadLength: payloadLength, qos: qos,
                     retained: facts.retained, ackedCount: ackedCount, bodySize: publishes ? facts.message?.bodySize : nil) {
            sink.append(byte: TableRecord.Tag.counted.rawValue)
            // Bounded: past the bound, every sum is written (a sum can always be written early).
            summedPDUs += 1
            if repeatCount > maxRepeats { flushRepeats(of: [], all: true, into: &sink) }
            return
        }
        // The connection's sums first: they count before this PDU, as their PDUs came.
        flushRepeats(of: ctx.stream, into: &sink)
        if laneConnections.count >= maxIntroduced, laneConnections[ctx.stream] == nil {
            // Bounded: every connection is let go, its sums written first.
            flushRepeats(of: [], all: true, into: &sink)
            laneConnections.removeAll()
            lastLane = nil
        }
        noteCounted(stream: ctx.stream, kind: kind, topic: isPublish ? topic : nil, queue: settles ? queue : nil,
                    exchange: publishes ? messageNumbers : nil)
        var present: TableRecord.Present = []
        if topic != nil { present.insert(.topic) }
        if payloadLength != nil { present.insert(.payloadLength) }
        if qos != nil { present.insert(.qos) }
        if facts.retained { present.insert(.retained) }
        if clientID != nil { present.insert(.clientID) }
        if connectVersion != nil { present.insert(.connectVersion) }
        if version != nil { present.insert(.version) }
        if channel != nil { present.insert(.channel) }
        if queue != nil { present.insert(.queue) }
        if ackedCount != nil { present.insert(.ackedCount) }
        if hasIdentity { present.insert(.identity) }
        if messageNumbers != nil { present.insert(.message) }
        if hasClose { present.insert(.close) }
        if !problems.isEmpty { present.insert(.problems) }
        if direction == .toClient { present.insert(.toClient) }
        // Most records are of the same connection as the one before: no set lookup then.
        if ctx.stream != lastIntroduced, introduced.count >= maxIntroduced { introduced.removeAll() }
        let introducing = ctx.stream != lastIntroduced && introduced.insert(ctx.stream).inserted
        lastIntroduced = ctx.stream
        if introducing { present.insert(.introduction) }

        // The fixed-width part, stored in place with one capacity check; then the rest.
        sink.appendInPlace(maximum: TableRecord.maxFixedPart) { p in
            var at = 0
            func put<T: FixedWidthInteger>(_ value: T) {
                p.storeBytes(of: value, toByteOffset: at, as: T.self)
                at += MemoryLayout<T>.size
            }
            put(TableRecord.Tag.pdu.rawValue)
            put(present.rawValue)
            put(Int64(ctx.stream))
            put(ctx.time.seconds)
            put(ctx.time.nanoseconds)
            put(UInt8(truncatingIfNeeded: ctx.time.fractionalDigits))
            put(kind)
            if let topic { put(topic) }
            if let payloadLength { put(Int64(payloadLength)) }
            if let qos { put(Int64(qos)) }
            if let channel { put(Int64(channel)) }
            if let queue { put(queue) }
            if let ackedCount { put(Int64(ackedCount)) }
            return at
        }
        // Strings with no number are written in full after it, in the same order.
        if kind == TableRecord.inline { Self.string(facts.kind, into: &sink) }
        if topic == TableRecord.inline, let name = facts.topic { Self.string(name, into: &sink) }
        if queue == TableRecord.inline, let name = facts.queue { Self.string(name, into: &sink) }
        if introducing {
            let endpoints = ctx.endpoints
            Self.string(endpoints.source, into: &sink)
            Self.string(endpoints.destination, into: &sink)
            Self.string(protocolName(), into: &sink)
        }
        if let clientID { Self.string(clientID, into: &sink) }
        if let connectVersion { Self.string(connectVersion, into: &sink) }
        if let version { Self.string(version, into: &sink) }
        if hasIdentity, let identity = facts.identity {
            Self.strings([identity.saslUser, identity.vhost, identity.product, identity.productVersion, identity.platform], into: &sink)
        }
        if let messageNumbers, let message = facts.message {
            var mask: UInt8 = 0
            if message.method != nil { mask |= 1 }
            if message.exchange != nil { mask |= 2 }
            if message.routingKey != nil { mask |= 4 }
            sink.append(byte: mask)
            if let n = messageNumbers.0, let s = message.method { name(n, s, into: &sink) }
            if let n = messageNumbers.1, let s = message.exchange { name(n, s, into: &sink) }
            if let n = messageNumbers.2, let s = message.routingKey { name(n, s, into: &sink) }
            Self.optional(message.bodySize, into: &sink)
        }
        if hasClose, let close = facts.close {
            Self.optional(close.replyCode, into: &sink)
            Self.strings([close.replyCodeName, close.replyText, close.failedMethod], into: &sink)
        }
        if !problems.isEmpty {
            Self.raw(UInt32(problems.count), into: &sink)
            for p in problems {
                Self.string(p.code.rawValue, into: &sink)
                Self.string(p.description, into: &sink)
            }
        }
    }

    /// Writes the sums kept for `streams` (connections leaving the lane: the caller's thread counts
    /// their PDUs from now on, and their sums must count before those), or all of them (`all`: the
    /// end of the input, or at any point: a sum can always be written early).
    public func flushRepeats(of streams: [Int], all: Bool, into sink: inout ByteSink) {
        if all {
            for stream in laneConnections.keys.sorted() { flushRepeats(of: stream, into: &sink) }
        } else {
            for stream in streams { flushRepeats(of: stream, into: &sink) }
        }
    }

    /// Writes the sums of one connection, as they were begun.
    private func flushRepeats(of stream: Int, into sink: inout ByteSink) {
        guard repeatCount > 0, let lane = laneConnection(stream, making: false), !lane.repeats.isEmpty else { return }
        for (k, r) in lane.repeats.rows { writeRepeat(r, key: k, stream: stream, into: &sink) }
        repeatCount -= lane.repeats.count
        lane.repeats.removeAll()
    }

    private func writeRepeat(_ r: Repeat, key k: RepeatKey, stream: Int, into sink: inout ByteSink) {
        sink.append(byte: TableRecord.Tag.repeated.rawValue)
        sink.append(byte: k.flags)
        Self.raw(Int64(stream), into: &sink)
        Self.time(r.time, into: &sink)
        Self.raw(k.kind, into: &sink)
        Self.raw(Int64(r.count), into: &sink)
        Self.raw(Int64(k.channel), into: &sink)
        if k.flags & RepeatKey.hasTopic != 0 {
            Self.raw(k.topic, into: &sink)
            Self.raw(Int64(r.payloadBytes), into: &sink)
            Self.raw(Int64(r.qos.0), into: &sink)
            Self.raw(Int64(r.qos.1), into: &sink)
            Self.raw(Int64(r.qos.2), into: &sink)
            Self.raw(Int64(r.retained), into: &sink)
        }
        if k.flags & RepeatKey.hasQueue != 0 {
            Self.raw(k.queue, into: &sink)
            Self.raw(Int64(r.acked), into: &sink)
        }
        if k.flags & RepeatKey.hasMessage != 0 {
            if k.flags & RepeatKey.hasMethod != 0 { Self.raw(k.method, into: &sink) }
            if k.flags & RepeatKey.hasExchange != 0 { Self.raw(k.exchange, into: &sink) }
            if k.flags & RepeatKey.hasRoutingKey != 0 { Self.raw(k.routingKey, into: &sink) }
            Self.raw(Int64(r.bodyBytes), into: &sink)
        }
    }

    /// The lane's state of a connection (made when `making`; the last one is kept at hand).
    private func laneConnection(_ stream: Int, making: Bool) -> LaneConnection? {
        if let last = lastLane, last.stream == stream { return last.connection }
        if let found = laneConnections[stream] {
            lastLane = (stream, found)
            return found
        }
        guard making else { return nil }
        let made = LaneConnection()
        laneConnections[stream] = made
        peakLaneConnections = max(peakLaneConnections, laneConnections.count)
        lastLane = (stream, made)
        return made
    }

    /// The key of a PDU's sum, or nil when a string it counts by has no number (or the kind
    /// has none: strings written in full are not summed). Topic, queue and message are the
    /// PDU's when the table counts them: a PUBLISH's topic, a settling kind's queue.
    private func repeatKey(kind: UInt32, channel: Int?, topic: UInt32?, isPublish: Bool, queue: UInt32?, settles: Bool,
                           message: (UInt32?, UInt32?, UInt32?)?, publishes: Bool) -> RepeatKey? {
        guard kind != TableRecord.inline else { return nil }
        var key = RepeatKey(kind: kind, channel: channel ?? 0, topic: 0, queue: 0, method: 0, exchange: 0, routingKey: 0, flags: 0)
        if isPublish {
            // A PUBLISH without a topic counts under "?": written in full.
            guard let topic, topic != TableRecord.inline, Int(topic >> 6) < countedTopics.count,
                  countedTopics[Int(topic >> 6)] >> UInt64(topic & 63) & 1 == 1 else { return nil }
            key.topic = topic
            key.flags |= RepeatKey.hasTopic
        }
        if let queue {
            // A queue of a kind that settles nothing still counts when the rows are full: in full.
            guard settles, queue != TableRecord.inline, countedQueues.contains(UInt64(queue) << 32 | UInt64(kind)) else { return nil }
            key.queue = queue
            key.flags |= RepeatKey.hasQueue
        }
        if case let (method, exchange, routingKey)? = message {
            key.flags |= RepeatKey.hasMessage
            if let method {
                guard method != TableRecord.inline else { return nil }
                key.method = method
                key.flags |= RepeatKey.hasMethod
            }
            if let exchange {
                guard exchange != TableRecord.inline else { return nil }
                key.exchange = exchange
                key.flags |= RepeatKey.hasExchange
            }
            if let routingKey {
                guard routingKey != TableRecord.inline else { return nil }
                key.routingKey = routingKey
                key.flags |= RepeatKey.hasRoutingKey
            }
            if publishes {
                guard let exchange, let routingKey, countedExchanges.contains(UInt64(exchange) << 32 | UInt64(routingKey)) else { return nil }
            }
        }
        return key
    }

    /// Adds a PDU to its connection's sum of `key`; false when its kind was not counted in the
    /// connection by a record of its own yet.
    private func addRepeat(_ key: RepeatKey, stream: Int, time: Timestamp, payloadLength: Int?, qos: Int?, retained: Bool,
                           ackedCount: Int?, bodySize: Int?) -> Bool {
        guard let lane = laneConnection(stream, making: false), lane.kinds.contains(key.kind) else { return false }
        let i: Int
        if let found = lane.repeats.index(forKey: key) {
            i = found
        } else {
            i = lane.repeats.count
            lane.repeats.append(key, Repeat(time: time))
            repeatCount += 1
            peakRepeats = max(peakRepeats, repeatCount)
        }
        lane.repeats.values[i].count += 1
        lane.repeats.values[i].time = time
        if key.flags & RepeatKey.hasTopic != 0 {
            lane.repeats.values[i].payloadBytes += payloadLength ?? 0
            let one = TableRenderer.qosCounts(qos)
            lane.repeats.values[i].qos.0 += one.0
            lane.repeats.values[i].qos.1 += one.1
            lane.repeats.values[i].qos.2 += one.2
            if retained { lane.repeats.values[i].retained += 1 }
        }
        if key.flags & RepeatKey.hasQueue != 0 { lane.repeats.values[i].acked += ackedCount ?? 1 }
        lane.repeats.values[i].bodyBytes += bodySize ?? 0
        return true
    }

    /// After a PDU's record of its own: its kind in its connection, and its topic, queue and
    /// exchange, are counted, so the next PDUs like it can be summed. All bounded: a set past
    /// its bound is emptied (the connections are, by the caller, after their sums are written).
    private func noteCounted(stream: Int, kind: UInt32, topic: UInt32?, queue: UInt32?, exchange: (UInt32?, UInt32?, UInt32?)?) {
        guard kind != TableRecord.inline else { return }
        if let lane = laneConnection(stream, making: true), !lane.kinds.contains(kind) { lane.kinds.append(kind) }
        if let topic, topic != TableRecord.inline {
            let word = Int(topic >> 6)
            if word >= countedTopics.count { countedTopics += [UInt64](repeating: 0, count: word + 1 - countedTopics.count) }
            countedTopics[word] |= 1 << UInt64(topic & 63)
        }
        if let queue, queue != TableRecord.inline {
            if countedQueues.count >= TableRecord.maxCounted { countedQueues.removeAll() }
            countedQueues.insert(UInt64(queue) << 32 | UInt64(kind))
        }
        if case let (_, exchange?, routingKey?)? = exchange, exchange != TableRecord.inline, routingKey != TableRecord.inline {
            if countedExchanges.count >= TableRecord.maxCounted { countedExchanges.removeAll() }
            countedExchanges.insert(UInt64(exchange) << 32 | UInt64(routingKey))
        }
    }

    /// The number of `s`, writing its definition first if it has none yet; `TableRecord.inline`
    /// when the numbers are all taken (the string is then written where it is used).
    private func number(_ s: String, into sink: inout ByteSink) -> UInt32 {
        // First by the String's two words: kinds are nearly always the very strings named before
        // (literals, a method spec's name), and equal words are that string while it is kept
        // here. Only strings with a number are kept.
        if let n = sameStrings.value(for: s) { return n }
        let n = numberByDigest(s, into: &sink)
        if n != TableRecord.inline { sameStrings.remember(s, n) }
        return n
    }

    private func numberByDigest(_ s: String, into sink: inout ByteSink) -> UInt32 {
        let key = Key(s)
        let slot = Int(truncatingIfNeeded: key.digest) & (Self.recentSlots - 1)
        if recent[slot].digest == key.digest, recent[slot].name == s { return recent[slot].number }
        if let n = numbers[key] {
            recent[slot] = (key.digest, n, s)
            return n
        }
        let length = s.utf8.count
        guard numbers.count < maxNamedStrings, length <= maxNamedLength,
              namedBytes + length <= maxNamedBytes else { return TableRecord.inline }
        let n = UInt32(numbers.count)
        numbers[key] = n
        namedBytes += length
        recent[slot] = (key.digest, n, s)
        sink.append(byte: TableRecord.Tag.string.rawValue)
        Self.string(s, into: &sink)
        return n
    }

    /// Where a string is used: its number, and the string itself when it has none (`TableRecord.inline`).
    private func name(_ number: UInt32, _ s: String, into sink: inout ByteSink) {
        Self.raw(number, into: &sink)
        if number == TableRecord.inline { Self.string(s, into: &sink) }
    }

    private static func raw<T: FixedWidthInteger>(_ value: T, into sink: inout ByteSink) {
        withUnsafeBytes(of: value) { sink.append(bytes: $0.bindMemory(to: UInt8.self)) }
    }

    private static func time(_ t: Timestamp, into sink: inout ByteSink) {
        raw(t.seconds, into: &sink)
        raw(t.nanoseconds, into: &sink)
        sink.append(byte: UInt8(t.fractionalDigits))
    }

    private static func string(_ s: String, into sink: inout ByteSink) {
        raw(UInt32(s.utf8.count), into: &sink)
        sink.append(s)
    }

    private static func optional(_ value: Int?, into sink: inout ByteSink) {
        sink.append(byte: value == nil ? 0 : 1)
        if let value { raw(Int64(value), into: &sink) }
    }

    /// A byte saying which of `values` follow, then those.
    private static func strings(_ values: [String?], into sink: inout ByteSink) {
        var mask: UInt8 = 0
        for (i, v) in values.enumerated() where v != nil { mask |= 1 << UInt8(i) }
        sink.append(byte: mask)
        for case let v? in values { string(v, into: &sink) }
    }
}

/// Reads the records of a table's input back into the table, in order: one reader per run, on
/// the caller's thread, for the records of one `TableRecordWriter`, passing over the bytes that
/// are only the second lane's weights (`TableRecord.Tag.counted`).
public final class TableRecordReader {
    // The caller's thread alone.
    @exclusivity(unchecked) private var strings: [String] = []
    /// The facts of the record being read: one box, reset for each.
    @exclusivity(unchecked) private var facts = PDUFacts(kind: "")

    public init() {}

    /// Counts the records in `bytes` into `table`: whole records, as written.
    public func read(_ bytes: UnsafeBufferPointer<UInt8>, into table: inout TableRenderer) {
        var r = Reader(bytes: bytes)
        while !r.atEnd {
            switch TableRecord.Tag(rawValue: r.byte()) {
            case .counted:
                continue
            case .string:
                strings.append(r.string())
            case .pdu:
                let present = TableRecord.Present(rawValue: r.raw(UInt16.self))
                let stream = Int(r.raw(Int64.self))
                let time = r.time()
                // The fixed-width part first, then the strings written in full, as written.
                let kind = r.raw(UInt32.self)
                let topic = present.contains(.topic) ? r.raw(UInt32.self) : nil
                let payloadLength = present.contains(.payloadLength) ? Int(r.raw(Int64.self)) : nil
                let qos = present.contains(.qos) ? Int(r.raw(Int64.self)) : nil
                let channel = present.contains(.channel) ? Int(r.raw(Int64.self)) : nil
                let queue = present.contains(.queue) ? r.raw(UInt32.self) : nil
                let ackedCount = present.contains(.ackedCount) ? Int(r.raw(Int64.self)) : nil
                facts.reset(kind: named(kind, &r))
                if let topic { facts.topic = named(topic, &r) }
                if let queue { facts.queue = named(queue, &r) }
                if let payloadLength { facts.payloadLength = payloadLength }
                if let qos { facts.qos = qos }
                if present.contains(.retained) { facts.retained = true }
                if let channel { facts.channel = channel }
                if let ackedCount { facts.ackedCount = ackedCount }
                var source = "", destination = "", protocolName = ""
                if present.contains(.introduction) {
                    source = r.string()
                    destination = r.string()
                    protocolName = r.string()
                }
                if present.contains(.clientID) { facts.clientID = r.string() }
                if present.contains(.connectVersion) { facts.connectVersion = r.string() }
                if present.contains(.version) { facts.version = r.string() }
                if present.contains(.identity) {
                    let s = r.strings(5)
                    var identity = PDUFacts.ClientIdentity()
                    identity.saslUser = s[0]
                    identity.vhost = s[1]
                    identity.product = s[2]
                    identity.productVersion = s[3]
                    identity.platform = s[4]
                    facts.identity = identity
                }
                if present.contains(.message) {
                    let mask = r.byte()
                    let method = mask & 1 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    let exchange = mask & 2 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    let routingKey = mask & 4 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    facts.message = PDUFacts.MessageFacts(method: method, exchange: exchange, routingKey: routingKey,
                                                          bodySize: r.optional())
                }
                if present.contains(.close) {
                    let code = r.optional()
                    let s = r.strings(3)
                    facts.close = PDUFacts.CloseFacts(replyCode: code, replyCodeName: s[0], replyText: s[1], failedMethod: s[2])
                }
                // A connection's first record from the lane introduces it; a table that has no
                // row for it yet has seen none of its PDUs, so it asks for these only then.
                table.notePDU(facts, stream: stream, time: time, direction: present.contains(.toClient) ? .toClient : .toServer,
                              source: source, destination: destination, protocolName: protocolName)
                if present.contains(.problems) {
                    for _ in 0..<Int(r.raw(UInt32.self)) {
                        // Read before counting: the example is asked for only the first time.
                        let code = r.string(), example = r.string()
                        table.noteProblem(code: code, example: example)
                    }
                }
            case .repeated:
                let flags = r.byte()
                let stream = Int(r.raw(Int64.self))
                let time = r.time()
                var repeated = TableRenderer.RepeatedPDUs(stream: stream, time: time, kind: strings[Int(r.raw(UInt32.self))],
                                                          count: Int(r.raw(Int64.self)), channel: Int(r.raw(Int64.self)))
                typealias Key = TableRecordWriter.RepeatKey
                if flags & Key.hasTopic != 0 {
                    repeated.topic = strings[Int(r.raw(UInt32.self))]
                    repeated.payloadBytes = Int(r.raw(Int64.self))
                    repeated.qos = (Int(r.raw(Int64.self)), Int(r.raw(Int64.self)), Int(r.raw(Int64.self)))
                    repeated.retained = Int(r.raw(Int64.self))
                }
                if flags & Key.hasQueue != 0 {
                    repeated.queue = strings[Int(r.raw(UInt32.self))]
                    repeated.acked = Int(r.raw(Int64.self))
                }
                if flags & Key.hasMessage != 0 {
                    let method = flags & Key.hasMethod != 0 ? strings[Int(r.raw(UInt32.self))] : nil
                    let exchange = flags & Key.hasExchange != 0 ? strings[Int(r.raw(UInt32.self))] : nil
                    let routingKey = flags & Key.hasRoutingKey != 0 ? strings[Int(r.raw(UInt32.self))] : nil
                    repeated.message = (method, exchange, routingKey)
                    repeated.bodyBytes = Int(r.raw(Int64.self))
                }
                table.noteRepeated(repeated)
            case .problem:
                let code = r.string(), example = r.string()
                table.noteProblem(code: code, example: example)
            case .closed:
                let stream = Int(r.raw(Int64.self))
                let client = r.string(), server = r.string(), protocolName = r.string()
                let first = r.time(), last = r.time()
                let toServer = Int(r.raw(Int64.self)), toClient = Int(r.raw(Int64.self))
                table.noteClosed(ConnectionSummary(stream: stream, client: client, server: server, protocolName: protocolName,
                                                   firstSeen: first, lastSeen: last, bytesToServer: toServer,
                                                   bytesToClient: toClient, closeReason: ""))
            case nil:
                preconditionFailure("not a table record: records are read whole, as they were written")
            }
        }
    }

    /// The string named `number`, or the one written in full next.
    private func named(_ number: UInt32, _ r: inout Reader) -> String {
        number == TableRecord.inline ? r.string() : strings[Int(number)]
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        var atEnd: Bool { at >= bytes.count }

        mutating func byte() -> UInt8 {
            defer { at += 1 }
            return bytes[at]
        }

        mutating func raw<T: FixedWidthInteger>(_: T.Type) -> T {
            precondition(at + MemoryLayout<T>.size <= bytes.count, "a table record ends early")
            defer { at += MemoryLayout<T>.size }
            return UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(fromByteOffset: at, as: T.self)
        }

        mutating func time() -> Timestamp {
            let seconds = raw(Int64.self), nanoseconds = raw(UInt32.self)
            return Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: Int(byte()))
        }

        mutating func string() -> String {
            let n = Int(raw(UInt32.self))
            precondition(at + n <= bytes.count, "a table record ends early")
            defer { at += n }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<at + n]), as: UTF8.self)
        }

        /// A byte saying which of `count` strings follow, then those.
        mutating func strings(_ count: Int) -> [String?] {
            let mask = byte()
            return (0..<count).map { i in mask >> UInt8(i) & 1 == 1 ? string() : nil }
        }

        mutating func optional() -> Int? {
            byte() == 0 ? nil : Int(raw(Int64.self))
        }
    }
}

extension TableRenderer {
    /// Counts `event` as `render` does, writing nothing (a run in lanes weighs an event of the
    /// caller's lane that writes nothing as one byte).
    public mutating func count(_ event: OutputEvent) {
        var nothing = ""
        render(event, into: &nothing)
    }
}
