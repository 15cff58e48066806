import Dissection

/// Summary tables printed at the end: per connection, per topic (MQTT), per exchange and routing
/// key and per queue (AMQP), the channel and connection closes, and the problems by kind. Fits
/// an 80-column terminal; sections with nothing to show are left out.
///
/// It reads only the common model: each PDU's `PDUFacts` (set by a decoder's facts view, or
/// read off the field tree's well-known root keys), its problems, and the connection summaries.
public struct TableRenderer: Renderer {
    public let options: RenderOptions

    private struct ConnectionRow {
        var stream: Int
        /// Where in the run the row was made (`setPosition`): rows past the limit are the latest made.
        var position = 0
        /// Whether the connection's close was counted.
        var closed = false
        var client = ""
        var server = ""
        var protocolName = ""
        var clientID = ""
        var version = ""
        var first: Timestamp?
        var last: Timestamp?
        var pdus = 0
        var kinds = KindCounts()
        var bytesToServer = 0
        var bytesToClient = 0
        var user = ""
        var vhost: String?
        var product = ""
        var productVersion = ""
        var platform = ""
        var channels: Set<Int> = []
        /// The channel last counted (most PDUs are on the same channel as the one before).
        var lastChannel = -1
        /// What its message flows came to (MQTT QoS 1 and 2), and how it ended.
        var flows: FlowStatistics?
        var end = ""
    }

    private struct TopicRow: MergedRow {
        var name: String
        var position = 0
        var messages = 0
        var bytes = 0
        /// By QoS 0, 1 and 2 (a tuple: an array's element was checked and made unique per count).
        var qos = (0, 0, 0)
        var retained = 0

        mutating func add(_ other: TopicRow) {
            add(messages: other.messages, bytes: other.bytes, qos: other.qos, retained: other.retained)
            position = min(position, other.position)
        }

        /// `messages` PUBLISHes of `bytes` payload bytes in all: by QoS 0, 1 and 2, and retained.
        mutating func add(messages: Int, bytes: Int, qos: (Int, Int, Int), retained: Int) {
            self.messages += messages
            self.bytes += bytes
            self.qos.0 += qos.0
            self.qos.1 += qos.1
            self.qos.2 += qos.2
            self.retained += retained
        }
    }

    /// A row of topics, exchanges or queues: where it was made, and how another worker's row of
    /// the same name is added to it (`merge`).
    private protocol MergedRow {
        var position: Int { get set }
        mutating func add(_ other: Self)
    }

    /// A topic as the key of its row (`DigestKey`: hashed by FNV-1a).
    private typealias TopicKey = DigestKey

    /// An exchange and routing key, with a digest of both (FNV-1a over the exchange's bytes, a
    /// separator, the routing key's): the key of a `DigestTable`.
    private struct ExchangeKey: DigestHashed, Comparable {
        let exchange: String
        let routingKey: String
        let digest: UInt64

        init(exchange: String, routingKey: String) {
            self.exchange = exchange
            self.routingKey = routingKey
            // A separator byte between the two (0xFF is never UTF-8).
            digest = DigestKey.fnv1a(routingKey, from: (DigestKey.fnv1a(exchange) ^ 0xFF) &* 0x100_0000_01B3)
        }

        static func == (a: ExchangeKey, b: ExchangeKey) -> Bool {
            a.digest == b.digest && a.exchange == b.exchange && a.routingKey == b.routingKey
        }

        static func < (a: ExchangeKey, b: ExchangeKey) -> Bool {
            (a.exchange, a.routingKey) < (b.exchange, b.routingKey)
        }
    }

    private struct ExchangeRow: MergedRow {
        var publishes = 0
        var bytes = 0
        var position = 0

        mutating func add(publishes: Int, bytes: Int) {
            self.publishes += publishes
            self.bytes += bytes
        }

        mutating func add(_ other: ExchangeRow) {
            add(publishes: other.publishes, bytes: other.bytes)
            position = min(position, other.position)
        }
    }

    private struct QueueRow: MergedRow {
        var deliveries = 0
        var acks = 0
        var nacks = 0
        var rejects = 0
        /// PDUs counted in the row, of any kind (what `untrackedQueues` counts of a queue with no row).
        var pdus = 0
        var position = 0

        mutating func add(_ other: QueueRow) {
            deliveries += other.deliveries
            acks += other.acks
            nacks += other.nacks
            rejects += other.rejects
            pdus += other.pdus
            position = min(position, other.position)
        }

        /// `pdus` PDUs whose kind has `effect`, settling `settled` deliveries: deliveries and
        /// rejects count PDUs, acks and nacks the deliveries they settle (a `multiple` one, many).
        mutating func add(_ effect: QueueEffect?, pdus: Int, settled: Int) {
            self.pdus += pdus
            switch effect {
            case .delivery?: deliveries += pdus
            case .ack?: acks += settled
            case .nack?: nacks += settled
            case .reject?: rejects += pdus
            case nil: break
            }
        }
    }

    private struct CloseRow {
        var stream: Int
        var position: Int
        var byClient: Bool
        var method: String
        var code: Int?
        var codeName: String?
        var text: String
        var failedMethod: String?
    }

    /// A stream number as the key of its connection's row (a `DigestTable`'s: the number mixed).
    private struct StreamKey: DigestHashed {
        let stream: Int
        var digest: UInt64 { UInt64(bitPattern: Int64(stream)) &* 0x9E37_79B9_7F4A_7C15 }
    }

    private var connections = DigestTable<StreamKey, ConnectionRow>()
    /// The row of the last PDU's connection, where it is in `connections` (most PDUs follow one
    /// of the same connection); forgotten whenever a row is added or replaced.
    private var lastConnection: (stream: Int, index: Int)?
    private var topics = DigestTable<TopicKey, TopicRow>()
    /// Rows by their names' Strings (`StringWordsCache`), before the digest: topics (a
    /// connection's decoder hands out one String per topic), queues, and exchanges by routing key
    /// (with the exchange's String checked too).
    private var topicRowCache = StringWordsCache<Int>(slots: 1024)
    private var queueRowCache = StringWordsCache<Int>(slots: 64)
    private var exchangeRowCache = StringWordsCache<(exchange: String, row: Int)>(slots: 64)
    private var topicOrder: [String] = []
    private var exchanges = DigestTable<ExchangeKey, ExchangeRow>()
    private var queues = DigestTable<DigestKey, QueueRow>()
    private var closes: [CloseRow] = []
    private var problems: [String: (count: Int, example: String, position: Int)] = [:]
    /// Analysis records by protocol and kind, each with the first one's message.
    private var findings: [String: (count: Int, example: String, position: Int)] = [:]
    /// Clients that reconnected (`reconnect` records): client id, connections, intervals (ms).
    private var reconnects: [(client: String, connections: Int, intervals: [Int])] = []
    /// Topics' deliveries (`topic_delivery` records): the record's fields.
    private var deliveries: [[Field]] = []
    /// AMQP's topology (the `topology` record): its tree's lines, and where each exchange and
    /// routing key's publishes were routed (queues, by exchange and key).
    private var topology: [String] = []
    private var routedTo: [String: [String]] = [:]
    /// Publishes the broker model routed into each queue.
    private var routedInto: [String: Int] = [:]
    /// AMQP deliveries left unacknowledged per queue (`unacknowledged` records).
    private var unacknowledged: [String: Int] = [:]
    /// AMQP consumers (`consumer` records): where each was in the run, and its record's fields.
    private var consumers: [(position: Int, fields: [Field])] = []
    /// Where in the run the events counted next are (`setPosition`).
    private var position = 0
    /// What did not fit the row limit, summed.
    private var untracked = ConnectionRow(stream: -1)
    private var untrackedConnections = 0
    private var untrackedTopics = 0
    private var untrackedExchanges = 0
    private var untrackedQueues = 0
    private var untrackedCloses = 0

    /// Whether a row for `stream` is (or may become) tracked.
    private func tracks(_ stream: Int) -> Bool {
        connections.index(forKey: StreamKey(stream: stream)) != nil || connections.count < options.maxTableRows
    }

    public init(options: RenderOptions) {
        self.options = options
    }

    /// Counts the event; tables print nothing before `finish`.
    public mutating func render(_ event: OutputEvent, into bytes: inout [UInt8]) {
        var nothing = ""
        render(event, into: &nothing)
    }

    /// Counts the event; tables print nothing before `finish`. Implemented here so a program that
    /// writes through a sink does not go through the byte-array and String forms per event.
    public mutating func render(_ event: OutputEvent, into sink: inout ByteSink) {
        var nothing = ""
        render(event, into: &nothing)
    }

    public mutating func render(_ event: OutputEvent, into out: inout String) {
        switch event {
        case .pdu(let event):
            // Read through `event`, not copied out of it: a copy of the context and the PDU
            // retained and released each per PDU.
            notePDU(event.pdu.summaryFacts, stream: event.context.stream, time: event.context.time, direction: event.direction,
                    source: event.context.endpoints.source, destination: event.context.endpoints.destination,
                    protocolName: event.pdu.protocolName)
            if event.pdu.problemCount > 0 {
                for p in event.pdu.problems { noteProblem(code: p.code.rawValue, example: p.description) }
            }
        case .counted(let run):
            let context = run.context
            run.forEachInPlace { pdu in
                notePDU(pdu, stream: context.stream, time: context.time, direction: run.direction,
                        source: context.endpoints.source, destination: context.endpoints.destination,
                        protocolName: run.protocolName)
            }
        case .streamNote(_, let p), .captureNote(let p):
            noteProblem(code: p.code.rawValue, example: p.description)
        case .connectionClosed(let c):
            noteClosed(c)
        case .analysis(let r):
            if r.kind == .reconnect, reconnects.count < options.maxTableRows,
               case .string(let client)? = r.fields.first(where: { $0.key == "client_id" })?.value {
                let connections = r.fields.first { $0.key == "connections" }?.value.intValue ?? 0
                let intervals = r.fields.first { $0.key == "intervals_ms" }?.children.compactMap(\.value.intValue) ?? []
                reconnects.append((client, connections, intervals))
            }
            if r.kind == .topicDelivery, deliveries.count < options.maxTableRows { deliveries.append(r.fields) }
            if r.protocolName == "amqp" { noteAMQPRecord(r) }
            let key = "\(r.protocolName) \(r.kind.rawValue)"
            if let e = findings[key] {
                findings[key] = (e.count + 1, e.example, e.position)
            } else {
                findings[key] = (1, r.message, position)
            }
        }
    }

    /// What the AMQP tables show of a record: the topology's tree and routes, the deliveries a
    /// queue's consumers left unacknowledged.
    private mutating func noteAMQPRecord(_ r: AnalysisRecord) {
        func string(_ fields: [Field], _ key: String) -> String? { fields.first { $0.key == key }?.value.stringValue }
        switch r.kind {
        case .topology:
            // The tree alone: where publishes went is the Exchanges table's `routed to`.
            topology = AMQPTopologyTree.lines(r.fields, routes: false)
            for route in r.fields.first(where: { $0.key == "routes" })?.children ?? [] {
                let queues = route.children.first { $0.key == "queues" }?.children.compactMap(\.value.stringValue) ?? []
                routedTo[(string(route.children, "exchange") ?? "") + "\u{0}" + (string(route.children, "routing_key") ?? "")] = queues
            }
            for entry in r.fields.first(where: { $0.key == "routed_into" })?.children ?? [] {
                guard let queue = string(entry.children, "queue"),
                      let publishes = entry.children.first(where: { $0.key == "publishes" })?.value.intValue else { continue }
                routedInto[queue] = publishes
            }
        case .consumer:
            if consumers.count < options.maxTableRows { consumers.append((position, r.fields)) }
        case .unacknowledged:
            guard let queue = string(r.fields, "queue"), let count = r.fields.first(where: { $0.key == "count" })?.value.intValue else { return }
            unacknowledged[queue, default: 0] += count
        default:
            return
        }
    }

    /// One PDU's share of the tables (its problems are counted apart). The endpoints and the
    /// protocol's name are asked for only by a connection's first PDU.
    mutating func notePDU<Facts: TableFacts>(_ facts: Facts, stream: Int, time: Timestamp, direction: Direction,
                          source: @autoclosure () -> String, destination: @autoclosure () -> String,
                          protocolName: @autoclosure () -> String) {
        let kind = facts.kind
        // The row is updated in place (a copy out of the dictionary would copy its arrays per PDU).
        if let last = lastConnection, last.stream == stream {
            Self.note(facts, kind, protocolName(), source(), destination(), time, direction, in: &connections.values[last.index])
        } else if let i = connections.index(forKey: StreamKey(stream: stream)) {
            lastConnection = (stream, i)
            Self.note(facts, kind, protocolName(), source(), destination(), time, direction, in: &connections.values[i])
        } else if connections.count < options.maxTableRows {
            var row = ConnectionRow(stream: stream, position: position)
            Self.note(facts, kind, protocolName(), source(), destination(), time, direction, in: &row)
            lastConnection = nil
            connections.append(StreamKey(stream: stream), row)
        } else {
            Self.note(facts, kind, protocolName(), source(), destination(), time, direction, in: &untracked)
        }
        if Self.kind(kind, is: "PUBLISH") {
            let name = facts.topic ?? "?"
            if let i = topicRow(name) {
                Self.count(bytes: facts.payloadLength ?? 0, qos: facts.qos, retained: facts.retained, in: &topics.values[i])
            } else if topics.count >= options.maxTableRows {
                untrackedTopics += 1
            } else {
                topicOrder.append(name)
                var row = TopicRow(name: name, position: position)
                Self.count(bytes: facts.payloadLength ?? 0, qos: facts.qos, retained: facts.retained, in: &row)
                topics.append(TopicKey(name), row)
            }
        }
        // Few PDUs have any of a message, an identity or a close: one question spares the three.
        let rare = facts.hasIdentityMessageOrClose
        if rare, let message = facts.message { notePublish(message) }
        if let queue = facts.queue { noteQueue(queue, count: facts.ackedCount ?? 1, kind: kind) }
        if rare, let close = facts.close, kind == "channel.close" || kind == "connection.close" {
            if closes.count < options.maxTableRows {
                closes.append(CloseRow(stream: stream, position: position, byClient: direction == .toServer, method: kind,
                                       code: close.replyCode, codeName: close.replyCodeName,
                                       text: close.replyText ?? "", failedMethod: close.failedMethod))
            } else {
                untrackedCloses += 1
            }
        }
    }

    /// The row of the topic `name`: by its String, else by its digest (then remembered for it).
    @inline(__always)
    private mutating func topicRow(_ name: String) -> Int? {
        if let i = topicRowCache.value(for: name) { return i }
        guard let i = topics.index(forKey: TopicKey(name)) else { return nil }
        topicRowCache.remember(name, i)
        return i
    }

    /// The row of the queue `name`, likewise.
    private mutating func queueRow(_ name: String) -> Int? {
        if let i = queueRowCache.value(for: name) { return i }
        guard let i = queues.index(forKey: DigestKey(name)) else { return nil }
        queueRowCache.remember(name, i)
        return i
    }

    /// The row of an exchange and routing key, likewise (by the routing key's String, the
    /// exchange's checked).
    private mutating func exchangeRow(_ exchange: String, _ routingKey: String) -> Int? {
        if let cached = exchangeRowCache.value(for: routingKey), isSameString(cached.exchange, exchange) {
            return cached.row
        }
        guard let i = exchanges.index(forKey: ExchangeKey(exchange: exchange, routingKey: routingKey)) else { return nil }
        exchangeRowCache.remember(routingKey, (exchange, i))
        return i
    }

    /// A connection's end: its endpoints, bytes and times.
    mutating func noteClosed(_ c: ConnectionSummary) {
        guard tracks(c.stream) else {
            untrackedConnections += 1
            untracked.bytesToServer += c.bytesToServer
            untracked.bytesToClient += c.bytesToClient
            return
        }
        let key = StreamKey(stream: c.stream)
        let existing = connections.index(forKey: key)
        var row = existing.map { connections.values[$0] } ?? ConnectionRow(stream: c.stream, position: position)
        row.closed = true
        row.client = c.client
        row.server = c.server
        if row.protocolName.isEmpty { row.protocolName = c.protocolName }
        row.bytesToServer = c.bytesToServer
        row.bytesToClient = c.bytesToClient
        row.flows = c.flows
        row.end = c.ending ?? c.closeReason
        if row.first == nil || c.firstSeen < row.first! { row.first = c.firstSeen }
        if row.last == nil || row.last! < c.lastSeen { row.last = c.lastSeen }
        lastConnection = nil
        if let i = existing { connections.values[i] = row } else { connections.append(key, row) }
    }

    private static func count(bytes: Int, qos: Int?, retained: Bool, in t: inout TopicRow) {
        t.add(messages: 1, bytes: bytes, qos: qosCounts(qos), retained: retained ? 1 : 0)
    }

    /// One PUBLISH of QoS `qos` as counts by QoS 0, 1 and 2 (none for a QoS it does not have).
    @inline(__always)
    static func qosCounts(_ qos: Int?) -> (Int, Int, Int) {
        (qos == 0 ? 1 : 0, qos == 1 ? 1 : 0, qos == 2 ? 1 : 0)
    }

    /// One PDU's share of its connection's row.
    private static func note<Facts: TableFacts>(_ facts: Facts, _ kind: String, _ protocolName: @autoclosure () -> String,
                             _ source: @autoclosure () -> String, _ destination: @autoclosure () -> String,
                             _ time: Timestamp, _ direction: Direction, in row: inout ConnectionRow) {
        if row.protocolName.isEmpty { row.protocolName = protocolName() }
        if row.client.isEmpty {
            row.client = direction == .toServer ? source() : destination()
            row.server = direction == .toServer ? destination() : source()
        }
        if row.first == nil { row.first = time }
        row.last = time
        row.pdus += 1
        row.kinds.add(kind, 1)
        if Self.kind(kind, is: "CONNECT") {
            if let id = facts.clientID { row.clientID = id }
            if let v = facts.connectVersion { row.version = v }
        }
        if facts.hasIdentityMessageOrClose, let identity = facts.identity {
            if let v = identity.saslUser { row.user = v }
            if let v = identity.vhost { row.vhost = v }
            if let v = identity.product { row.product = v }
            if let v = identity.productVersion { row.productVersion = v }
            if let v = identity.platform { row.platform = v }
        }
        if let c = facts.channel, c != 0, c != row.lastChannel {
            row.channels.insert(c)
            row.lastChannel = c
        }
        if row.version.isEmpty, let v = facts.version { row.version = v }
    }

    /// Whether `kind` is `name`. Lengths first: comparing two different strings is a runtime call
    /// (about 80 instructions), made per PDU here, and most kinds differ in length from the one
    /// sought.
    @inline(__always)
    static func kind(_ kind: String, is name: String) -> Bool {
        kind.utf8.count == name.utf8.count && kind == name
    }

    /// A connection's PDUs by kind, in the order the kinds were first seen (as the table lists
    /// them), with a small cache of where each kind is, by the two words of its String: a
    /// connection has a few dozen kinds, and the frequent ones (an AMQP delivery's four) were
    /// found by passing over those before them, per PDU.
    struct KindCounts {
        private(set) var list: [(String, Int)] = []
        /// Where each kind is in `list`, by the String kept there.
        private var cache = StringWordsCache<Int>(slots: 16)

        mutating func add(_ kind: String, _ count: Int) {
            if let i = cache.value(for: kind) {
                list[i].1 += count
                return
            }
            let i: Int
            if let found = TableRenderer.kindIndex(kind, in: list) {
                i = found
            } else {
                list.append((kind, 0))
                i = list.count - 1
            }
            list[i].1 += count
            // Under the String kept in `list` (alive while the cache is), when it is this one.
            if isSameString(list[i].0, kind) { cache.remember(kind, i) }
        }
    }

    /// Where `kind` is counted in `kinds`. Kinds are names from decoders' tables, so a kind is
    /// nearly always the very same string value as the one counted before it, bit for bit: that is
    /// checked first, as two words, since a String comparison of two different names costs a call
    /// into the standard library per name passed over. Equal bits are always equal strings.
    fileprivate static func kindIndex(_ kind: String, in kinds: [(String, Int)]) -> Int? {
        for i in kinds.indices where isSameString(kinds[i].0, kind) { return i }
        return kinds.firstIndex { $0.0 == kind }
    }

    /// A completed published message: counted once, on the PDU that completed it.
    private mutating func notePublish(_ message: PDUFacts.MessageFacts) {
        guard message.method == "basic.publish" else { return }
        let exchange = message.exchange ?? "", routingKey = message.routingKey ?? ""
        // The row is updated where it is.
        if let i = exchangeRow(exchange, routingKey) {
            exchanges.values[i].add(publishes: 1, bytes: message.bodySize ?? 0)
        } else if exchanges.count >= options.maxTableRows {
            untrackedExchanges += 1
        } else {
            exchanges.append(ExchangeKey(exchange: exchange, routingKey: routingKey),
                             ExchangeRow(publishes: 1, bytes: message.bodySize ?? 0, position: position))
        }
    }

    /// Deliveries and the client's settlements, by the queue the decoder attributed them to.
    private mutating func noteQueue(_ queue: String, count: Int, kind: String) {
        let effect = QueueEffect(kind: kind)
        // The row is updated where it is.
        if let i = queueRow(queue) {
            queues.values[i].add(effect, pdus: 1, settled: count)
        } else if queues.count >= options.maxTableRows {
            untrackedQueues += 1
        } else if effect != nil {
            var row = QueueRow(position: position)
            row.add(effect, pdus: 1, settled: count)
            queues.append(DigestKey(queue), row)
        }
    }

    /// What a PDU of a kind counts in its queue's row, if anything.
    enum QueueEffect {
        case delivery, ack, nack, reject

        init?(kind: String) {
            switch kind {
            case "basic.deliver", "basic.get-ok": self = .delivery
            case "basic.ack": self = .ack
            case "basic.nack": self = .nack
            case "basic.reject": self = .reject
            default: return nil
            }
        }
    }

    /// The client id column: MQTT's client id, else AMQP's user@vhost, else the client product.
    private func clientColumn(_ row: ConnectionRow) -> String {
        if !row.clientID.isEmpty { return row.clientID }
        if !row.user.isEmpty { return row.vhost.map { "\(row.user)@\($0)" } ?? row.user }
        if !row.product.isEmpty { return row.product }
        return "-"
    }

    /// The line under an AMQP connection: client product, version and platform, user, virtual
    /// host, channels used. Empty when the decoder gave none of them (MQTT).
    private func identityLine(_ row: ConnectionRow) -> String {
        var parts: [String] = []
        if !row.product.isEmpty || !row.productVersion.isEmpty {
            var client = "client " + [row.product, row.productVersion].filter { !$0.isEmpty }.joined(separator: " ")
            if !row.platform.isEmpty { client += " (\(row.platform))" }
            parts.append(client)
        }
        if !row.user.isEmpty { parts.append("user \(row.user)") }
        if let vhost = row.vhost { parts.append("vhost \(vhost)") }
        if !row.channels.isEmpty { parts.append("channels \(row.channels.count)") }
        // `wrap` breaks between parts only; each part must fit a line of its own (indent 7, comma).
        return parts.map { cut($0, 72) }.joined(separator: ", ")
    }

    /// A problem of the kind `code`; the first one's description is the kind's example.
    mutating func noteProblem(code: String, example: @autoclosure () -> String) {
        if let e = problems[code] { problems[code] = (e.count + 1, e.example, e.position) } else { problems[code] = (1, example(), position) }
    }

    public mutating func setPosition(_ position: Int) {
        self.position = position
    }

    /// Takes in another worker's counts (`EventRenderer`): its connections are its own, its
    /// topics, exchanges, queues and problems are added to the rows of the same name. Rows are
    /// kept by where they were made: past `maxTableRows`, the latest made are summed in the
    /// untracked counts, as one renderer that counted every event in order would have. (For
    /// connections and closes that is exact; a topic, exchange or queue that one worker could not
    /// give a row, its own rows being full, stays summed in the untracked counts.)
    public mutating func merge(_ other: TableRenderer) {
        let limit = options.maxTableRows
        lastConnection = nil
        topicRowCache = StringWordsCache(slots: 1024)
        queueRowCache = StringWordsCache(slots: 64)
        exchangeRowCache = StringWordsCache(slots: 64)

        // Connections: each is one worker's.
        var rows = connections.values + other.connections.values
        untrackedConnections += other.untrackedConnections
        untracked.pdus += other.untracked.pdus
        untracked.bytesToServer += other.untracked.bytesToServer
        untracked.bytesToClient += other.untracked.bytesToClient
        rows.sort { ($0.position, $0.stream) < ($1.position, $1.stream) }
        connections = DigestTable()
        for (i, row) in rows.enumerated() {
            if i < limit {
                connections.append(StreamKey(stream: row.stream), row)
            } else {
                untracked.pdus += row.pdus
                if row.closed {
                    untrackedConnections += 1
                    untracked.bytesToServer += row.bytesToServer
                    untracked.bytesToClient += row.bytesToClient
                }
            }
        }

        // Topics, exchanges and queues: rows of the same name added together.
        topics = Self.merged(topics, other.topics, limit: limit) { untrackedTopics += $1.messages }
        topicOrder = topics.values.map(\.name)
        untrackedTopics += other.untrackedTopics
        exchanges = Self.merged(exchanges, other.exchanges, limit: limit) { untrackedExchanges += $1.publishes }
        untrackedExchanges += other.untrackedExchanges
        queues = Self.merged(queues, other.queues, limit: limit) { untrackedQueues += $1.pdus }
        untrackedQueues += other.untrackedQueues

        // Closes: each is one worker's; those of one event stay in their order.
        var allCloses = closes.enumerated().map { ($0.element, 0, $0.offset) }
            + other.closes.enumerated().map { ($0.element, 1, $0.offset) }
        allCloses.sort { ($0.0.position, $0.1, $0.2) < ($1.0.position, $1.1, $1.2) }
        untrackedCloses += other.untrackedCloses + max(0, allCloses.count - limit)
        closes = allCloses.prefix(limit).map(\.0)

        // Problems and analysis findings: counts added; the example is the one seen first.
        Self.add(other.problems, to: &problems)
        Self.add(other.findings, to: &findings)
        reconnects += other.reconnects
        deliveries += other.deliveries
        if topology.isEmpty { topology = other.topology }
        routedTo.merge(other.routedTo) { mine, _ in mine }
        if routedInto.isEmpty { routedInto = other.routedInto }
        unacknowledged.merge(other.unacknowledged, uniquingKeysWith: +)
        consumers = (consumers + other.consumers).sorted { $0.position < $1.position }.prefix(options.maxTableRows).map { $0 }
    }

    private static func add(_ theirs: [String: (count: Int, example: String, position: Int)],
                            to mine: inout [String: (count: Int, example: String, position: Int)]) {
        for (code, e) in theirs {
            if let m = mine[code] {
                mine[code] = (m.count + e.count, e.position < m.position ? e.example : m.example, min(m.position, e.position))
            } else {
                mine[code] = e
            }
        }
    }

    /// `mine` and `theirs` as one table: rows of the same key added, each where the first of them
    /// was made; past `limit`, the rows made last are left out, handed to `dropped`.
    private static func merged<Key: DigestHashed, Row: MergedRow>(_ mine: DigestTable<Key, Row>, _ theirs: DigestTable<Key, Row>,
                                                                 limit: Int, dropped: (Key, Row) -> Void) -> DigestTable<Key, Row> {
        var rows = Array(mine.rows)
        for (key, row) in theirs.rows {
            if let i = mine.index(forKey: key) { rows[i].1.add(row) } else { rows.append((key, row)) }
        }
        // Made at the same place (one event's), rows keep their order.
        let order = rows.indices.sorted { (rows[$0].1.position, $0) < (rows[$1].1.position, $1) }
        var table = DigestTable<Key, Row>()
        for (n, i) in order.enumerated() {
            if n < limit { table.append(rows[i].0, rows[i].1) } else { dropped(rows[i].0, rows[i].1) }
        }
        return table
    }

    public mutating func finish(into out: inout String) {
        out.append("Connections\n")
        out.append(pad("stream", 6, right: true) + " " + pad("client", 21) + " " + pad("client id", 13) + " "
                   + pad("ver", 5) + " " + pad("secs", 6, right: true) + " " + pad("PDUs", 6, right: true) + " "
                   + pad("→ server", 8, right: true) + " " + pad("← server", 8, right: true) + "\n")
        for row in connections.values.sorted(by: { $0.stream < $1.stream }) {
            var secs = 0.0
            if let f = row.first, let l = row.last { secs = l.timeInterval - f.timeInterval }
            out.append(pad(String(row.stream), 6, right: true) + " " + pad(row.client, 21) + " "
                       + pad(clientColumn(row), 13) + " " + pad(row.version.isEmpty ? row.protocolName : row.version, 5) + " "
                       + pad(fixed(secs), 6, right: true) + " " + pad(String(row.pdus), 6, right: true) + " "
                       + pad(size(row.bytesToServer), 8, right: true) + " " + pad(size(row.bytesToClient), 8, right: true) + "\n")
            let identity = identityLine(row)
            if !identity.isEmpty { out.append(wrap(identity, indent: 7, width: 80)) }
            let kinds = row.kinds.list.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            if !kinds.isEmpty { out.append(wrap(kinds, indent: 7, width: 80)) }
        }
        if untrackedConnections > 0 || untracked.pdus > 0 {
            out.append(wrap("… \(untrackedConnections) more connections not listed (--max-table-rows), \(untracked.pdus) PDUs, \(size(untracked.bytesToServer)) → server, \(size(untracked.bytesToClient)) ← server", indent: 0, width: 80))
        }
        if !topicOrder.isEmpty {
            out.append("\nTopics\n")
            out.append(pad("topic", 40) + " " + pad("msgs", 6, right: true) + " " + pad("bytes", 8, right: true) + " "
                       + pad("QoS 0/1/2", 12, right: true) + " " + pad("retained", 8, right: true) + "\n")
            for name in topicOrder.sorted() {
                guard let t = topics[TopicKey(name)] else { continue }
                out.append(pad(t.name, 40) + " " + pad(String(t.messages), 6, right: true) + " " + pad(size(t.bytes), 8, right: true) + " "
                           + pad("\(t.qos.0)/\(t.qos.1)/\(t.qos.2)", 12, right: true) + " " + pad(String(t.retained), 8, right: true) + "\n")
            }
        }
        if untrackedTopics > 0 { out.append("… \(untrackedTopics) PUBLISHes to topics not listed (--max-table-rows)\n") }
        // MQTT's message flows, then AMQP's publisher confirms: the same columns.
        for (protocolName, title) in [("mqtt", "Message flows (QoS 1 and 2) and how connections ended"),
                                      ("amqp", "Publisher confirms (publishes to the broker's confirm)")] {
            let flowRows = connections.values.filter { $0.flows != nil && ($0.protocolName == "amqp") == (protocolName == "amqp") }
            guard !flowRows.isEmpty else { continue }
            out.append("\n\(title)\n")
            out.append(pad("stream", 6, right: true) + " " + pad("done", 6, right: true) + " " + pad("open", 5, right: true) + " "
                       + pad("p50", 9, right: true) + " " + pad("p99", 9, right: true) + " " + pad("max", 9, right: true) + " "
                       + "ended\n")
            for row in flowRows.sorted(by: { $0.stream < $1.stream }) {
                let f = row.flows!
                let time = { (us: Int?) in us.map { latencyText(microseconds: $0) } ?? "-" }
                out.append(pad(String(row.stream), 6, right: true) + " " + pad(String(f.completed), 6, right: true) + " "
                           + pad(String(f.incomplete), 5, right: true) + " " + pad(time(f.latency.percentile(50)), 9, right: true) + " "
                           + pad(time(f.latency.percentile(99)), 9, right: true) + " "
                           + pad(time(f.latency.count > 0 ? f.latency.maximum : nil), 9, right: true)
                           + (row.end.count <= 27 ? " " + row.end : "") + "\n")
                // A longer ending on a line of its own.
                if row.end.count > 27 { out.append(String(repeating: " ", count: 7) + cut(row.end, 73) + "\n") }
            }
        }
        if !exchanges.isEmpty {
            out.append("\nExchanges\n")
            let routes = !routedTo.isEmpty
            out.append(pad("exchange", 26) + " " + pad("routing key", 32) + " " + pad("publishes", 9, right: true) + " "
                       + pad("bytes", 9, right: true) + (routes ? "  routed to" : "") + "\n")
            for (key, row) in exchanges.rows.sorted(by: { $0.0 < $1.0 }) {
                var line = pad(key.exchange.isEmpty ? "(default)" : key.exchange, 26) + " "
                    + pad(key.routingKey.isEmpty ? "(empty)" : key.routingKey, 32) + " "
                    + pad(String(row.publishes), 9, right: true) + " " + pad(size(row.bytes), 9, right: true)
                if let queues = routedTo[key.exchange + "\u{0}" + key.routingKey] { line += "  " + cut(queues.isEmpty ? "(no queue)" : queues.joined(separator: ", "), 60) }
                out.append(line + "\n")
            }
        }
        if untrackedExchanges > 0 { out.append("… \(untrackedExchanges) publishes to exchanges not listed (--max-table-rows)\n") }
        if !queues.isEmpty || !routedInto.isEmpty {
            out.append("\nQueues\n")
            let unacked = !unacknowledged.isEmpty, routed = !routedInto.isEmpty
            out.append(pad("queue", 40) + " " + (routed ? pad("routed", 7, right: true) + " " : "") + pad("deliveries", 10, right: true) + " "
                       + pad("acks", 8, right: true) + " " + pad("nacks", 8, right: true) + " " + pad("rejects", 8, right: true)
                       + (unacked ? " " + pad("unacked", 8, right: true) : "") + "\n")
            // The queues counted, and those the broker model routed publishes into that gave out none.
            var rows = queues.rows.map { ($0.0.name, $0.1) }
            let counted = Set(rows.map(\.0))
            for name in routedInto.keys where !counted.contains(name) { rows.append((name, QueueRow())) }
            for (name, row) in rows.sorted(by: { $0.0 < $1.0 }) {
                out.append(pad(name.isEmpty ? "(unnamed)" : name, 40) + " "
                           + (routed ? pad(routedInto[name].map(String.init) ?? "-", 7, right: true) + " " : "")
                           + pad(String(row.deliveries), 10, right: true) + " "
                           + pad(String(row.acks), 8, right: true) + " " + pad(String(row.nacks), 8, right: true) + " "
                           + pad(String(row.rejects), 8, right: true)
                           + (unacked ? " " + pad(String(unacknowledged[name, default: 0]), 8, right: true) : "") + "\n")
            }
        }
        if untrackedQueues > 0 { out.append("… \(untrackedQueues) deliveries and settlements of queues not listed (--max-table-rows)\n") }
        if !consumers.isEmpty {
            out.append("\nConsumers\n")
            out.append(pad("consumer tag", 24) + " " + pad("queue", 24) + " " + pad("deliveries", 10, right: true) + " "
                       + pad("acks", 6, right: true) + " " + pad("rejects", 7, right: true) + " " + pad("prefetch", 8, right: true) + " "
                       + pad("a second", 8, right: true) + "\n")
            for (_, fields) in consumers {
                func value(_ key: String) -> FieldValue? { fields.first { $0.key == key }?.value }
                func number(_ key: String) -> String { value(key)?.intValue.map(String.init) ?? "-" }
                out.append(pad(value("consumer_tag")?.stringValue ?? "?", 24) + " " + pad(value("queue")?.stringValue ?? (value("before_capture") != nil ? "(before the capture)" : "?"), 24) + " "
                           + pad(number("deliveries"), 10, right: true) + " " + pad(number("acknowledged"), 6, right: true) + " "
                           + pad(number("rejected"), 7, right: true) + " " + pad(number("prefetch_count"), 8, right: true) + " "
                           + pad(number("per_second"), 8, right: true) + "\n")
            }
        }
        if !topology.isEmpty {
            out.append("\nTopology (exchange → binding key → queue; what was made before the capture is not seen)\n")
            for line in topology { out.append(line + "\n") }
        }
        if !closes.isEmpty {
            out.append("\nCloses\n")
            out.append(pad("stream", 6, right: true) + " " + pad("by", 6) + " " + pad("method", 16) + " "
                       + pad("reply", 27) + " failed method\n")
            // By connection, each in capture order (the pipeline may interleave connections' output).
            for c in closes.enumerated().sorted(by: { ($0.element.stream, $0.offset) < ($1.element.stream, $1.offset) }).map(\.element) {
                let reply = c.code.map { code in c.codeName.map { "\(code) \($0)" } ?? String(code) } ?? "?"
                out.append(pad(String(c.stream), 6, right: true) + " " + pad(c.byClient ? "client" : "server", 6) + " "
                           + pad(c.method, 16) + " " + pad(reply, 27) + " " + cut(c.failedMethod ?? "-", 20) + "\n")
                var text = c.text
                // RabbitMQ starts the text with the code's name, which the reply column shows already.
                if let name = c.codeName, text.hasPrefix(name + " - ") { text.removeFirst(name.count + 3) }
                if !text.isEmpty { out.append(String(repeating: " ", count: 7) + cut(text, 73) + "\n") }
            }
        }
        if untrackedCloses > 0 { out.append("… \(untrackedCloses) more closes not listed (--max-table-rows)\n") }
        if !deliveries.isEmpty {
            out.append("\nDeliveries (publisher to subscribers)\n")
            out.append(pad("topic", 28) + " " + pad("pubs", 5, right: true) + " " + pad("dlvd", 5, right: true) + " "
                       + pad("fan-out", 7, right: true) + " " + pad("p50", 9, right: true) + " " + pad("max", 9, right: true) + " "
                       + pad("lost", 4, right: true) + " retained\n")
            for fields in deliveries {
                func int(_ key: String) -> Int? { fields.first { $0.key == key }?.value.intValue }
                let latency = fields.first { $0.key == "latency_us" }?.children
                let p50 = latency?.first { $0.key == "p50" }?.value.intValue, max = latency?.first { $0.key == "max" }?.value.intValue
                let pubs = int("publishes") ?? 0, dlvd = int("deliveries") ?? 0
                let fanOut = pubs > 0 ? fixed(Double(dlvd) / Double(pubs)) : "-"
                out.append(pad(fields.first { $0.key == "topic" }?.value.stringValue ?? "?", 28) + " " + pad(String(pubs), 5, right: true) + " "
                           + pad(String(dlvd), 5, right: true) + " " + pad(fanOut, 7, right: true) + " "
                           + pad(p50.map { latencyText(microseconds: $0) } ?? "-", 9, right: true) + " "
                           + pad(max.map { latencyText(microseconds: $0) } ?? "-", 9, right: true) + " "
                           + pad(String(int("undelivered") ?? 0), 4, right: true) + " " + (int("retained_frame").map { "#\($0)" } ?? "-") + "\n")
            }
        }
        if !reconnects.isEmpty {
            out.append("\nReconnects\n")
            out.append(pad("client id", 24) + " " + pad("conns", 5, right: true) + " reconnected after (ms)\n")
            for r in reconnects {
                out.append(pad(r.client, 24) + " " + pad(String(r.connections), 5, right: true) + " "
                           + cut(r.intervals.map(String.init).joined(separator: ", "), 48) + "\n")
            }
        }
        if !findings.isEmpty {
            out.append("\nAnalysis\n")
            for (key, e) in findings.sorted(by: { $0.value.count > $1.value.count || ($0.value.count == $1.value.count && $0.key < $1.key) }) {
                out.append(pad(String(e.count), 6, right: true) + " " + pad(key, 30) + " ")
                out.append(String(e.example.prefix(42)) + "\n")
            }
        }
        if !problems.isEmpty {
            out.append("\nProblems\n")
            for (code, e) in problems.sorted(by: { $0.value.count > $1.value.count || ($0.value.count == $1.value.count && $0.key < $1.key) }) {
                out.append(pad(String(e.count), 6, right: true) + " " + pad(code, 22) + " ")
                out.append(String(e.example.prefix(50)) + "\n")
            }
        }
    }
}

/// Cuts `s` to at most `width` columns (a cut string ends in …), without padding.
func cut(_ s: String, _ width: Int) -> String {
    s.count > width ? String(s.prefix(width - 1)) + "…" : s
}

/// Pads or cuts `s` to exactly `width` columns (cut strings end in …).
func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let n = s.count
    if n > width { return String(s.prefix(width - 1)) + "…" }
    let fill = String(repeating: " ", count: width - n)
    return right ? fill + s : s + fill
}

/// One decimal place.
func fixed(_ v: Double) -> String {
    let tenths = Int((v * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}

/// A byte count in B, kB, MB, GB (powers of 1000, like tshark's statistics).
func size(_ n: Int) -> String {
    // At most 8 characters ("999.9 kB"), the width of the byte columns.
    if n < 10_000 { return "\(n) B" }
    if n < 999_950 { return "\(fixed(Double(n) / 1e3)) kB" }
    if n < 999_950_000 { return "\(fixed(Double(n) / 1e6)) MB" }
    if n < 999_950_000_000 { return "\(fixed(Double(n) / 1e9)) GB" }
    return "\(fixed(Double(n) / 1e12)) TB"
}

/// Word-wraps at ", " boundaries.
func wrap(_ s: String, indent: Int, width: Int) -> String {
    // Each connection's row has a line of kinds (ASCII), wrapped here: by Characters it cost
    // about 75,000 instructions a row, where an ASCII string's Characters are its bytes.
    wrapASCII(s, indent: indent, width: width) ?? wrapCharacters(s, indent: indent, width: width)
}

/// `wrap` by Characters, for any string.
func wrapCharacters(_ s: String, indent: Int, width: Int) -> String {
    var out = "", line = String(repeating: " ", count: indent)
    let parts = s.split(separator: ",").map { $0.hasPrefix(" ") ? String($0.dropFirst()) : String($0) }
    for (i, p) in parts.enumerated() {
        let piece = i < parts.count - 1 ? p + "," : p
        if line.count + piece.count + 1 > width && line.count > indent {
            out += line + "\n"
            line = String(repeating: " ", count: indent)
        }
        line += (line.count > indent ? " " : "") + piece
    }
    return out + line + "\n"
}

/// `wrap` over the bytes of an ASCII string (nil for any other), where each Character is a byte:
/// the same parts (split at each comma, empty ones left out, one leading space dropped), the
/// same breaks.
func wrapASCII(_ s: String, indent: Int, width: Int) -> String? {
    var s = s
    return s.withUTF8 { bytes -> String? in
        for b in bytes where b >= 0x80 { return nil }
        let comma = UInt8(ascii: ","), space = UInt8(ascii: " ")
        var parts: [Range<Int>] = []
        var start = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == comma {
            if i > start { parts.append(bytes[start] == space ? start + 1..<i : start..<i) }
            start = i + 1
        }
        var out: [UInt8] = []
        var line = [UInt8](repeating: space, count: indent)
        for (i, part) in parts.enumerated() {
            let pieceCount = part.count + (i < parts.count - 1 ? 1 : 0)
            if line.count + pieceCount + 1 > width && line.count > indent {
                out += line
                out.append(UInt8(ascii: "\n"))
                line = [UInt8](repeating: space, count: indent)
            }
            if line.count > indent { line.append(space) }
            line += bytes[part]
            if i < parts.count - 1 { line.append(comma) }
        }
        out += line
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }
}
