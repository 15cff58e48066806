import Dissection

/// RabbitMQ's topology and routing as the capture shows them, across connections (issue #29): the
/// exchanges, queues and bindings every connection declared and deleted, and each publish routed
/// through them as RabbitMQ routes (direct, fanout, topic with `*` and `#`, headers with the four
/// `x-match` modes, exchange-to-exchange bindings, alternate exchanges). It reads the broker
/// events the connection dissectors attach (`AMQPBrokerEvent`), merged in capture order.
///
/// What it finds comes out after the PDUs: a `topology` record (the exchanges with their
/// bindings, the queues, and where each exchange and routing key published to was routed),
/// `unroutable` for each publish no binding routes (linked to the broker's basic.return when
/// it is mandatory), and `routing_mismatch` where the broker did otherwise than the bindings
/// say. Bindings made before the capture are not seen: the records say so, and a publish
/// through an exchange the capture never declared is not judged.
// Unchecked: `observe` and `finish` run on the caller's thread alone (SpanningAnalysis); `reads`
// and `forwarded`, asked on the workers, read nothing of it.
public final class AMQPBroker: SpanningAnalysis, @unchecked Sendable {
    /// The model's state and its steps, in a value changed in place through one stored property
    /// (each stored property of a class was checked for exclusive access at run time).
    // One thread at a time (above), and no step reaches the model but through `observe` and `finish`.
    @exclusivity(unchecked) private var model: Model

    struct Exchange {
        var type: String
        var durable = false
        var autoDelete = false
        var isInternal = false
        var alternate: String?
        /// One of RabbitMQ's own (`amq.direct` …), not declared in the capture.
        var predeclared = false
    }

    /// A publish no binding routes.
    struct Unroutable {
        var frame: Int
        var exchange: String
        var routingKey: String
        var mandatory: Bool
        var returnFrame: Int?
        /// The exchange's type, when the capture or RabbitMQ declared it.
        var type: String?
    }

    /// Where one exchange and routing key's publishes were routed.
    struct Route {
        var queues: [String]
        var publishes = 0
    }

    /// An exchange and a routing key, as the routes are kept by (two strings hashed where they are:
    /// joined into one, most were long enough to be allocated per publish).
    struct RouteKey: Hashable {
        var exchange: String
        var routingKey: String
    }

    /// A queue delivered from, and the exchange and routing key of the deliveries.
    struct MismatchKey: Hashable {
        var queue: String
        var route: RouteKey
    }

    /// At most this many unroutable publishes and mismatches are recorded one by one.
    static let maxRecords = 1000
    /// At most this many exchanges and routing keys (and queues routed into) are listed: a
    /// publisher with a routing key per device would grow them without end. Those past it are
    /// counted (`publishesNotListed`) and routed all the same.
    static let maxRoutes = 16_384
    /// At most this many exchanges, queues and bindings are kept for the topology record (and
    /// as many first declarations, for a refused declare): clients each declaring a queue of
    /// their own would grow them without end. Those past it are counted, and route all the same.
    static let maxListed = 65_536

    public init(links: AMQPLinks? = nil) {
        model = Model(links: links)
    }

    public func observe(_ event: OutputEvent) {
        model.observe(event)
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        model.finish(record: record)
    }

    public func reads(_ event: OutputEvent) -> Bool {
        guard case .pdu(let e) = event, e.pdu.isProtocol("amqp"), let packet = e.pdu.packet else { return false }
        // By the packet's type: a cast out of the existential is a call into the runtime (about
        // 600 instructions, 3% of an AMQP table), a type compared is two loads.
        let type = type(of: packet)
        return type == AMQPBrokerEvent.self || (type == AMQPFrame.self && Self.brokerEvent(of: packet) != nil)
    }

    /// A PDU crosses to the caller's thread as its event alone, on a box with no tree.
    public func forwarded(_ event: OutputEvent) -> OutputEvent? {
        guard case .pdu(let e) = event, let broker = Self.event(of: e.pdu) else { return nil }
        var pdu = DissectedPDU(protocolName: "amqp", summary: "", fields: [], wireLength: e.pdu.wireLength)
        pdu.packet = broker
        return .pdu(PDUEvent(e.context, e.direction, pdu))
    }

    private static func event(of pdu: DissectedPDU) -> AMQPBrokerEvent? {
        guard pdu.isProtocol("amqp"), let packet = pdu.packet else { return nil }
        return brokerEvent(of: packet)
    }

    /// The broker event a packet carries, the packet opened out of its existential (SE-0352) and
    /// its type compared: `as?` from the existential is a call into the runtime (about 600
    /// instructions; asked once per broker event), the type, once known, is read as it is.
    private static func brokerEvent<Packet: TypedPacket>(of packet: Packet) -> AMQPBrokerEvent? {
        if Packet.self == AMQPBrokerEvent.self { return unsafeBitCast(packet, to: AMQPBrokerEvent.self) }
        if Packet.self == AMQPFrame.self { return unsafeBitCast(packet, to: AMQPFrame.self).broker }
        return nil
    }

    /// A binding's identity: its ends, key and arguments, the arguments compared in name order
    /// (RabbitMQ sorts them) by value and type, without the byte ranges (`nestedEqual`).
    private static func same(_ a: AMQPBrokerEvent.Binding, _ b: AMQPBrokerEvent.Binding) -> Bool {
        func sorted(_ table: AMQPFieldTable?) -> AMQPFieldValue {
            .table(AMQPFieldTable(entries: (table?.entries ?? []).sorted { $0.name < $1.name }))
        }
        return a.source == b.source && a.destination == b.destination && a.toExchange == b.toExchange && a.routingKey == b.routingKey
            && nestedEqual(sorted(a.arguments), sorted(b.arguments))
    }

    /// See `Model.route`.
    func route(exchange: String, routingKey: String, headers: AMQPFieldTable?) -> (queues: [String], known: Bool) {
        model.route(exchange: exchange, routingKey: routingKey, headers: headers)
    }

    /// Whether a binding of an exchange of `type` takes a message; nil for a type RabbitMQ's
    /// plugins add (`x-consistent-hash` …), which is not simulated.
    static func matches(type: String, binding: AMQPBrokerEvent.Binding, routingKey: String, headers: AMQPFieldTable?) -> Bool? {
        switch type {
        case "direct": return binding.routingKey == routingKey
        case "fanout": return true
        case "topic": return topicMatches(pattern: binding.routingKey, routingKey: routingKey)
        case "headers": return headersMatch(binding: binding.arguments, headers: headers)
        default: return nil
        }
    }

    /// RabbitMQ's topic matching: words separated by dots; `*` is exactly one word, `#` zero or more.
    static func topicMatches(pattern: String, routingKey: String) -> Bool {
        let p = pattern.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let k = routingKey.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // matched[i][j]: the first i words of the pattern match the first j of the key.
        var matched = Array(repeating: Array(repeating: false, count: k.count + 1), count: p.count + 1)
        matched[0][0] = true
        for i in 1...p.count {
            let word = p[i - 1]
            for j in 0...k.count {
                if word == "#" {
                    matched[i][j] = matched[i - 1][j] || (j > 0 && matched[i][j - 1])
                } else if j > 0 {
                    matched[i][j] = matched[i - 1][j - 1] && (word == "*" || word == k[j - 1])
                }
            }
        }
        return matched[p.count][k.count]
    }

    /// RabbitMQ's headers matching: the binding's `x-match` (`all`, the default, `any`,
    /// `all-with-x`, `any-with-x`) over its other arguments (those starting `x-` only with the
    /// `-with-x` modes), each present in the message's headers with an equal value (a void
    /// binding value asks for presence alone).
    static func headersMatch(binding: AMQPFieldTable?, headers: AMQPFieldTable?) -> Bool {
        var mode = "all"
        if let value = binding?["x-match"], case .longString(let s) = value { mode = AMQPText.shortString(s.bytes) }
        let withX = mode.hasSuffix("-with-x")
        let any = mode.hasPrefix("any")
        let wanted = (binding?.entries ?? []).filter { $0.name != "x-match" && (withX || !$0.name.hasPrefix("x-")) }
        // RabbitMQ sorts the headers by name (stably) and compares a binding's key with the
        // first of that name.
        var message: [String: AMQPFieldValue] = [:]
        for entry in headers?.entries ?? [] where message[entry.name] == nil { message[entry.name] = entry.value }
        func matches(_ entry: AMQPFieldTable.Entry) -> Bool {
            guard let value = message[entry.name] else { return false }
            if case .void = entry.value { return true }
            return headerValueMatches(value, entry.value)
        }
        if any { return wanted.contains(where: matches) }
        return wanted.allSatisfy(matches)
    }

    /// Whether a message header's value equals a binding's as RabbitMQ's headers exchange
    /// compares them (rabbit_exchange_type_headers: Erlang's `==` on the values alone, not their
    /// types): integers of any width, timestamps and floats as numbers (`1` equals `1.0`), a long
    /// string and a byte array as their bytes, a boolean only a boolean; a nested table or array
    /// with its types, entry by entry.
    static func headerValueMatches(_ a: AMQPFieldValue, _ b: AMQPFieldValue) -> Bool {
        if let x = Number(a), let y = Number(b) { return x == y }
        switch (a, b) {
        case (.boolean(let x), .boolean(let y)): return x == y
        case (.longString(let x), .longString(let y)), (.longString(let x), .bytes(let y)),
             (.bytes(let x), .longString(let y)), (.bytes(let x), .bytes(let y)):
            return x.declaredLength == y.declaredLength && x.bytes.elementsEqual(y.bytes)
        case (.decimal(let s1, let m1), .decimal(let s2, let m2)): return s1 == s2 && m1 == m2
        case (.table, .table), (.array, .array): return nestedEqual(a, b)
        default: return false
        }
    }

    /// Nested tables and arrays as Erlang compares their `{type, value}` terms: the same types,
    /// equal values, in order; byte ranges do not count.
    private static func nestedEqual(_ a: AMQPFieldValue, _ b: AMQPFieldValue) -> Bool {
        switch (a, b) {
        case (.table(let x), .table(let y)):
            return x.skippedBytes == nil && y.skippedBytes == nil && x.entries.count == y.entries.count
                && zip(x.entries, y.entries).allSatisfy { $0.name == $1.name && nestedEqual($0.value, $1.value) }
        case (.array(let x), .array(let y)):
            return x.skippedBytes == nil && y.skippedBytes == nil && x.items.count == y.items.count
                && zip(x.items, y.items).allSatisfy { nestedEqual($0.value, $1.value) }
        case (.longString(let x), .longString(let y)), (.bytes(let x), .bytes(let y)):
            return x.declaredLength == y.declaredLength && x.bytes.elementsEqual(y.bytes)
        case (.undecoded, _), (_, .undecoded):
            return false
        default:
            return a == b
        }
    }

    private static func list(_ queues: [String]) -> String {
        queues.isEmpty ? "no queue" : queues.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// A field-table value in a line: strings as text, the rest as Swift prints it.
    private static func text(_ value: AMQPFieldValue) -> String {
        switch value {
        case .longString(let s), .bytes(let s): return AMQPText.shortString(s.bytes)
        case .boolean(let b): return b ? "true" : "false"
        case .int8(let v): return String(v)
        case .uint8(let v): return String(v)
        case .int16(let v): return String(v)
        case .uint16(let v): return String(v)
        case .int32(let v): return String(v)
        case .uint32(let v): return String(v)
        case .int64(let v): return String(v)
        case .void: return "(void)"
        default: return "\(value)"
        }
    }

    /// A number as Erlang compares one: an integer exactly, a float by value (equal to an
    /// integer when it is that integer).
    private enum Number: Equatable {
        case integer(negative: Bool, magnitude: UInt64)
        case real(Double)

        init?(_ value: AMQPFieldValue) {
            switch value {
            case .int8(let v): self = .integer(negative: v < 0, magnitude: UInt64(v.magnitude))
            case .uint8(let v): self = .integer(negative: false, magnitude: UInt64(v))
            case .int16(let v): self = .integer(negative: v < 0, magnitude: UInt64(v.magnitude))
            case .uint16(let v): self = .integer(negative: false, magnitude: UInt64(v))
            case .int32(let v): self = .integer(negative: v < 0, magnitude: UInt64(v.magnitude))
            case .uint32(let v): self = .integer(negative: false, magnitude: UInt64(v))
            case .int64(let v): self = .integer(negative: v < 0, magnitude: v.magnitude)
            case .timestamp(let v): self = .integer(negative: false, magnitude: v)
            case .float(let v): self = Number(real: Double(v))
            case .double(let v): self = Number(real: v)
            default: return nil
            }
        }

        /// A float that is a whole number within 64 bits is that integer.
        private init(real: Double) {
            if real.rounded() == real, real.magnitude < 0x1p64, let magnitude = UInt64(exactly: real.magnitude) {
                self = .integer(negative: real < 0 && magnitude != 0, magnitude: magnitude)
            } else {
                self = .real(real)
            }
        }
    }
}

extension AMQPBroker {
    /// The model's state, and its steps on each event (see `AMQPBroker`).
    struct Model {
        /// What exists now (the routing reads these).
        private var exchanges: [String: Exchange] = [:]
        private var queueSet: Set<String> = []
        private var bindings = AMQPBindingIndex()
        /// Everything seen, in the order first seen, and whether it was deleted or removed since
        /// (the topology record shows these): exchanges and queues by name, bindings by their
        /// number in `bindings`; at most `maxListed` of each.
        private var exchangeHistory = AMQPTopologyList<String, (name: String, exchange: Exchange, deleted: Bool)>(limit: AMQPBroker.maxListed)
        private var queueHistory = AMQPTopologyList<String, (name: String, deleted: Bool)>(limit: AMQPBroker.maxListed)
        private var bindingHistory = AMQPTopologyList<Int, (binding: AMQPBrokerEvent.Binding, removed: Bool)>(limit: AMQPBroker.maxListed)
        private var routes: [RouteKey: Route] = [:]
        /// Publishes routed into each queue, and the order the queues were first routed into.
        private var routedInto: [String: Int] = [:]
        private var routedIntoOrder: [String] = []
        private var routeOrder: [RouteKey] = []
        private var unroutable: [Unroutable] = []
        /// Mandatory publishes awaiting the broker's basic.return, by stream and channel: the index
        /// in `unroutable` (nil when the simulation routed it), and what it routed to.
        private var awaitingReturn: [Int: [(channel: UInt16, exchange: String, routingKey: String, index: Int?, frame: Int, place: Int,
                                            queues: [String])]] = [:]
        private var mismatches: [AnalysisRecord] = []
        private var mismatchesSeen: Set<MismatchKey> = []
        /// Routes by exchange and routing key, made while the topology was at `generation`, that
        /// passed no headers exchange (so hold for any headers): a publisher repeats its exchange and
        /// key, and routing each anew (sets, sorting) cost more than the rest of the model.
        private var routeCache: [RouteKey: (generation: Int, queues: [String], known: Bool)] = [:]
        /// Counts changes to exchanges, queues and bindings.
        private var generation = 0
        /// The first declaration of each queue and exchange seen (by `entity name`): where, and
        /// with what settings; and each declare's settings by connection and frame (the last 1,024),
        /// for a refused one.
        private var declarations: [String: (frame: Int, stream: Int, settings: String)] = [:]
        private var declareRequests: [String: String] = [:]
        private var declareRequestOrder: [String] = []
        private var refusals: [AnalysisRecord] = []
        private var publishesNotListed = 0
        /// Unroutable publishes past `maxRecords`, counted.
        private var unroutableNotListed = 0

        /// In a run's first pass: where each publish's route is written (`AMQPLinks`).
        private let links: AMQPLinks?

        init(links: AMQPLinks?) {
            self.links = links
            // RabbitMQ's predeclared exchanges (and the default exchange, "", handled apart).
            for (name, type) in [("amq.direct", "direct"), ("amq.fanout", "fanout"), ("amq.topic", "topic"),
                                 ("amq.headers", "headers"), ("amq.match", "headers")] {
                exchanges[name] = Exchange(type: type, durable: true, predeclared: true)
            }
        }

        mutating func observe(_ event: OutputEvent) {
            guard case .pdu(let e) = event, let broker = AMQPBroker.event(of: e.pdu) else { return }
            let stream = e.context.stream
            switch broker.kind {
            case .published, .returned, .delivered, .declareRequested, .declareRefused: break
            default: generation += 1
            }
            switch broker.kind {
            case .exchangeDeclared(let name, let type, let durable, let autoDelete, let isInternal, let alternate):
                // The default exchange cannot be declared; a redeclare with other arguments fails
                // (406 PRECONDITION_FAILED), so the first declaration stands.
                guard !name.isEmpty else { return }
                declared(entity: "exchange", name: name, settings: "type=\(type) durable=\(durable) auto-delete=\(autoDelete) internal=\(isInternal)",
                         frame: e.context.frame, stream: stream)
                guard exchanges[name] == nil else { return }
                let exchange = Exchange(type: type, durable: durable, autoDelete: autoDelete, isInternal: isInternal, alternate: alternate)
                exchanges[name] = exchange
                exchangeHistory.set(name, (name, exchange, false))
            case .exchangeDeleted(let name):
                exchanges[name] = nil
                exchangeHistory.update(name) { $0.deleted = true }
                // Its bindings, and the bindings to it (one from itself to itself is both).
                let from = bindings.from(name)
                removeBindings(from + bindings.to(name, exchange: true).filter { !from.contains($0) })
            case .queueDeclared(let name):
                declareQueue(name)
            case .queueDeleted(let name):
                queueSet.remove(name)
                queueHistory.update(name) { $0.deleted = true }
                removeBindings(bindings.to(name, exchange: false))
            case .bound(let binding):
                if bindings.matching(binding, same: AMQPBroker.same).isEmpty {
                    bindingHistory.set(bindings.add(binding), (binding, false))
                }
                if !binding.toExchange { declareQueue(binding.destination) }
            case .unbound(let binding):
                removeBindings(bindings.matching(binding, same: AMQPBroker.same))
            case .published(let publish):
                publishedMessage(publish, stream: stream, channel: broker.channel)
            case .returned(let code, let exchange, let routingKey):
                returned(code: code, exchange: exchange, routingKey: routingKey, stream: stream, channel: broker.channel,
                         frame: e.context.frame)
            case .declareRequested(let entity, let name, let settings):
                declared(entity: entity, name: name, settings: settings, frame: e.context.frame, stream: stream)
            case .declareRefused(let entity, let name, let requestFrame, let replyText):
                refused(entity: entity, name: name, requestFrame: requestFrame, replyText: replyText, closeFrame: e.context.frame, stream: stream)
            case .delivered(let queue, let exchange, let routingKey):
                delivered(queue: queue, exchange: exchange, routingKey: routingKey, frame: e.context.frame)
            }
        }

        /// A declare as asked: the first of each entity is kept, each for a while by where it came.
        private mutating func declared(entity: String, name: String, settings: String, frame: Int, stream: Int) {
            let key = entity + " " + name
            if declarations[key] == nil, declarations.count < AMQPBroker.maxListed { declarations[key] = (frame, stream, settings) }
            let request = "\(stream) \(frame)"
            if declareRequests.updateValue(settings, forKey: request) == nil {
                declareRequestOrder.append(request)
                if declareRequestOrder.count > 1024 { declareRequests[declareRequestOrder.removeFirst()] = nil }
            }
        }

        /// A 406 to a declare: the earlier declaration of the same name, when the capture has one.
        private mutating func refused(entity: String, name: String, requestFrame: Int, replyText: String, closeFrame: Int, stream: Int) {
            guard refusals.count < AMQPBroker.maxRecords, let first = declarations[entity + " " + name],
                  !(first.frame == requestFrame && first.stream == stream) else { return }
            let asked = declareRequests["\(stream) \(requestFrame)"].map { " asked \($0)" } ?? ""
            refusals.append(AnalysisRecord(
                protocolName: "amqp", kind: .declareRefused, frames: [first.frame, requestFrame, closeFrame],
                message: "the \(entity).declare of '\(name)' #\(requestFrame)\(asked); the broker refused it (\(replyText)): '\(name)' was declared first by #\(first.frame) on stream \(first.stream) with \(first.settings)",
                reference: "AMQP 0-9-1 \(entity).declare: a declare of an existing \(entity) must match it",
                fields: [Field(FieldKey(dynamic: entity), entity == "queue" ? "Queue" : "Exchange", .string(name)), Field("declared_frame", "Declared In Frame", .int(first.frame)),
                         Field("declared_stream", "Declared On Stream", .int(first.stream))]))
        }

        private mutating func declareQueue(_ name: String) {
            guard queueSet.insert(name).inserted else { return }
            queueHistory.set(name, (name, false))
        }

        /// Lets the bindings numbered `ids` go, marked removed in the history.
        private mutating func removeBindings(_ ids: [Int]) {
            for id in ids {
                bindingHistory.update(id) { $0.removed = true }
                bindings.remove(id)
            }
        }

        // MARK: - Routing

        /// Where RabbitMQ routes a message published to `exchange` with `routingKey` and `headers`,
        /// given the bindings seen so far: the queues (sorted, each once), and whether every
        /// exchange on the way is one the capture declared or RabbitMQ predeclares (else the answer
        /// may miss bindings made before the capture, and is not judged).
        func route(exchange: String, routingKey: String, headers: AMQPFieldTable?) -> (queues: [String], known: Bool) {
            var readsHeaders = false
            return route(exchange: exchange, routingKey: routingKey, headers: headers, readsHeaders: &readsHeaders)
        }

        /// `readsHeaders`: set when the route passed a headers exchange (its answer depends on them).
        private func route(exchange: String, routingKey: String, headers: AMQPFieldTable?,
                           readsHeaders: inout Bool) -> (queues: [String], known: Bool) {
            var queues: [String] = []
            var visited: Set<String> = []
            var known = true
            route(exchange, routingKey, headers, &visited, &queues, &known, &readsHeaders)
            return (Array(Set(queues)).sorted(), known)
        }

        private func route(_ name: String, _ routingKey: String, _ headers: AMQPFieldTable?, _ visited: inout Set<String>,
                           _ queues: inout [String], _ known: inout Bool, _ readsHeaders: inout Bool) {
            // AMQP 0-9-1 §3.1.3.1: the default exchange routes to the queue named by the routing
            // key, if there is one: a queue the capture did not declare may predate it.
            if name.isEmpty {
                if queueSet.contains(routingKey) { queues.append(routingKey) } else { known = false }
                return
            }
            guard visited.insert(name).inserted else { return }
            guard let exchange = exchanges[name] else {
                known = false
                return
            }
            let before = queues.count
            if exchange.type == "headers" { readsHeaders = true }
            // The bindings that can match, in the order they were made: by key for a direct
            // exchange, by the key's words for a topic exchange, all of them otherwise.
            let candidates: [Int]
            switch exchange.type {
            case "direct": candidates = bindings.from(name, key: routingKey)
            case "topic": candidates = bindings.from(name, topic: routingKey)
            default: candidates = bindings.from(name)
            }
            for id in candidates {
                guard let binding = bindings.bindings[id] else { continue }
                guard let matches = AMQPBroker.matches(type: exchange.type, binding: binding, routingKey: routingKey, headers: headers) else {
                    known = false
                    continue
                }
                guard matches else { continue }
                if binding.toExchange {
                    route(binding.destination, routingKey, headers, &visited, &queues, &known, &readsHeaders)
                } else {
                    queues.append(binding.destination)
                }
            }
            // RabbitMQ's alternate exchange: takes what the exchange routes nowhere.
            if queues.count == before, let alternate = exchange.alternate {
                route(alternate, routingKey, headers, &visited, &queues, &known, &readsHeaders)
            }
        }

        private mutating func publishedMessage(_ publish: AMQPBrokerEvent.Publish, stream: Int, channel: UInt16) {
            let key = RouteKey(exchange: publish.exchange, routingKey: publish.routingKey)
            let queues: [String], known: Bool
            // Each table is searched once per publish and changed in place (a read, then a write,
            // hashed the key twice and copied the entry out and back).
            if let c = routeCache.index(forKey: key), routeCache.values[c].generation == generation {
                (queues, known) = (routeCache.values[c].queues, routeCache.values[c].known)
            } else {
                var readsHeaders = false
                (queues, known) = route(exchange: publish.exchange, routingKey: publish.routingKey, headers: publish.headers,
                                        readsHeaders: &readsHeaders)
                if routeCache.count >= AMQPBroker.maxRoutes { routeCache.removeAll(keepingCapacity: true) }
                routeCache[key] = readsHeaders ? nil : (generation, queues, known)
            }
            for queue in queues {
                if let q = routedInto.index(forKey: queue) {
                    routedInto.values[q] += 1
                } else if routedInto.count < AMQPBroker.maxRoutes {
                    routedIntoOrder.append(queue)
                    routedInto[queue] = 1
                }
            }
            if let r = routes.index(forKey: key) {
                if routes.values[r].queues != queues { routes.values[r].queues = Array(Set(routes.values[r].queues + queues)).sorted() }
                routes.values[r].publishes += 1
            } else if routes.count < AMQPBroker.maxRoutes {
                routes[key] = Route(queues: queues, publishes: 1)
                routeOrder.append(key)
            } else {
                publishesNotListed += 1
            }
            if let links {
                links.update(stream: stream, frame: publish.frame, place: publish.place) { $0.queues = known ? queues : nil }
            }
            var index: Int?
            if queues.isEmpty, known, unroutable.count >= AMQPBroker.maxRecords {
                unroutableNotListed += 1
            } else if queues.isEmpty, known {
                index = unroutable.count
                unroutable.append(Unroutable(frame: publish.frame, exchange: publish.exchange,
                                             routingKey: publish.routingKey, mandatory: publish.mandatory,
                                             type: publish.exchange.isEmpty ? "direct" : exchanges[publish.exchange]?.type))
            }
            if publish.mandatory {
                var awaiting = awaitingReturn[stream] ?? []
                if awaiting.count >= 64 { awaiting.removeFirst() }
                awaiting.append((channel, publish.exchange, publish.routingKey, index, publish.frame, publish.place, queues))
                awaitingReturn[stream] = awaiting
            }
        }

        /// basic.return answers the oldest mandatory publish of its channel, exchange and routing
        /// key still awaiting an answer.
        private mutating func returned(code: Int, exchange: String, routingKey: String, stream: Int, channel: UInt16, frame: Int) {
            guard var awaiting = awaitingReturn[stream],
                  let at = awaiting.firstIndex(where: { $0.channel == channel && $0.exchange == exchange && $0.routingKey == routingKey })
            else { return }
            let publish = awaiting.remove(at: at)
            awaitingReturn[stream] = awaiting
            if let index = publish.index {
                unroutable[index].returnFrame = frame
            } else if code == 312, publish.queues.isEmpty, unroutable.count >= AMQPBroker.maxRecords {
                unroutableNotListed += 1
            } else if code == 312, publish.queues.isEmpty {
                // AMQP 0-9-1 312 NO_ROUTE for a publish the bindings seen could not judge (an
                // exchange or queue made before the capture): the broker says it was unroutable.
                unroutable.append(Unroutable(frame: publish.frame, exchange: exchange,
                                             routingKey: routingKey, mandatory: true, returnFrame: frame,
                                             type: exchange.isEmpty ? "direct" : exchanges[exchange]?.type))
                links?.update(stream: stream, frame: publish.frame, place: publish.place) { $0.queues = [] }
            } else if code == 312 {
                // AMQP 0-9-1 312 NO_ROUTE: the broker found no queue where the bindings seen route to some.
                mismatch(frames: [publish.frame, frame],
                         message: "the broker returned the publish to exchange '\(exchange)' with routing key '\(routingKey)' as 312 NO_ROUTE, but the bindings seen route it to \(AMQPBroker.list(publish.queues)): a binding the capture shows was removed, or the queue is gone",
                         fields: [Field("exchange", "Exchange", .string(exchange)), Field("routing_key", "Routing key", .string(routingKey))])
            }
        }

        /// A delivery from a queue: judged only when the capture showed publishes of its exchange
        /// and routing key, none of which the bindings seen route to that queue.
        private mutating func delivered(queue: String, exchange: String, routingKey: String, frame: Int) {
            // `routes` holds every queue the publishes of an exchange and key were routed to.
            let key = RouteKey(exchange: exchange, routingKey: routingKey)
            guard !exchange.isEmpty, let route = routes[key], !route.queues.contains(queue),
                  self.route(exchange: exchange, routingKey: routingKey, headers: nil).known else { return }
            guard mismatchesSeen.insert(MismatchKey(queue: queue, route: key)).inserted else { return }
            let simulated = routes[key]?.queues ?? []
            mismatch(frames: [frame],
                     message: "delivered from queue '\(queue)' (exchange '\(exchange)', routing key '\(routingKey)'), but the bindings seen route those publishes to \(AMQPBroker.list(simulated)): the message may predate the capture, or a binding made before it routes there",
                     fields: [Field("queue", "Queue", .string(queue)), Field("exchange", "Exchange", .string(exchange)),
                              Field("routing_key", "Routing key", .string(routingKey))])
        }

        private mutating func mismatch(frames: [Int], message: String, fields: [Field]) {
            guard mismatches.count < AMQPBroker.maxRecords else { return }
            mismatches.append(AnalysisRecord(protocolName: "amqp", kind: .routingMismatch, frames: frames, message: message,
                                             reference: "RabbitMQ exchange routing", fields: fields))
        }

        // MARK: - Records

        mutating func finish(record: (AnalysisRecord) -> Void) {
            for u in unroutable {
                let fate: String
                if let returned = u.returnFrame {
                    fate = "the broker returned it (basic.return #\(returned))"
                } else if u.mandatory {
                    fate = "it is mandatory, but no basic.return of it is in the capture"
                } else {
                    fate = "not mandatory, so the broker dropped it silently"
                }
                var fields = [Field("exchange", "Exchange", .string(u.exchange)), Field("routing_key", "Routing key", .string(u.routingKey)),
                              Field("mandatory", "Mandatory", .bool(u.mandatory))]
                if let returned = u.returnFrame { fields.append(Field("return_frame", "Returned In Frame", .int(returned))) }
                let exchange = u.exchange.isEmpty ? "the default exchange" : "\(u.type.map { "\($0) " } ?? "")exchange '\(u.exchange)'"
                let what = u.exchange.isEmpty ? "no queue is named '\(u.routingKey)'" : "no binding on \(exchange) matches '\(u.routingKey)'"
                let caveat = u.returnFrame == nil ? " (bindings made before the capture are not seen)" : ""
                record(AnalysisRecord(protocolName: "amqp", kind: .unroutable, frames: [u.frame] + (u.returnFrame.map { [$0] } ?? []),
                                      message: "\(what): \(fate)\(caveat)",
                                      reference: "AMQP 0-9-1 basic.publish mandatory", fields: fields))
            }
            if unroutableNotListed > 0 {
                record(AnalysisRecord(protocolName: "amqp", kind: .unroutable, frames: [],
                                      message: "\(unroutableNotListed) more publishes routed nowhere",
                                      fields: [Field("count", "Publishes", .int(unroutableNotListed))]))
            }
            for m in mismatches { record(m) }
            for r in refusals { record(r) }
            if let topology = topologyRecord() { record(topology) }
        }

        /// The exchanges, queues and bindings the capture showed (those deleted or removed since
        /// marked so), RabbitMQ's predeclared exchanges when they were bound or published to, and
        /// where each exchange and routing key published to was routed; nil when it shows none. The
        /// record's fields only: the tree drawn of them (exchange → binding key → queue) is a view
        /// (`AMQPTopologyTree` in Render).
        private mutating func topologyRecord() -> AnalysisRecord? {
            var shown = exchangeHistory.entries
            let listedBindings = bindingHistory.entries, listedQueues = queueHistory.entries
            let used = Set(listedBindings.map(\.binding.source) + routeOrder.map(\.exchange))
            for name in used.sorted() where !exchangeHistory.contains(name) {
                if let exchange = exchanges[name], exchange.predeclared { shown.append((name, exchange, false)) }
            }
            // Each exchange's bindings, in the order made (grouped once, not searched per exchange).
            let bindingsBySource = Dictionary(grouping: listedBindings.indices, by: { listedBindings[$0].binding.source })
            guard !shown.isEmpty || !listedQueues.isEmpty || !routeOrder.isEmpty else { return nil }
            var exchangeFields: [Field] = []
            for (name, exchange, deleted) in shown {
                var children = [Field("name", "Name", .string(name)), Field("type", "Type", .string(exchange.type)),
                                Field("durable", "Durable", .bool(exchange.durable))]
                if exchange.autoDelete { children.append(Field("auto_delete", "Auto-delete", .bool(true))) }
                if exchange.isInternal { children.append(Field("internal", "Internal", .bool(true))) }
                if let alternate = exchange.alternate { children.append(Field("alternate_exchange", "Alternate exchange", .string(alternate))) }
                if exchange.predeclared { children.append(Field("predeclared", "Predeclared", .bool(true))) }
                if deleted { children.append(Field("deleted", "Deleted", .bool(true))) }
                var bindingFields: [Field] = []
                for (b, removed) in (bindingsBySource[name] ?? []).map({ listedBindings[$0] }) {
                    var entry = [Field("routing_key", "Routing key", .string(b.routingKey)),
                                 Field(b.toExchange ? "exchange" : "queue", b.toExchange ? "Exchange" : "Queue", .string(b.destination))]
                    let entries = b.arguments?.entries ?? []
                    if !entries.isEmpty {
                        entry.append(Field("arguments", "Arguments", children: entries.map { Field(FieldKey(dynamic: $0.name), $0.name, .string(AMQPBroker.text($0.value))) }))
                    }
                    if removed { entry.append(Field("removed", "Removed", .bool(true))) }
                    bindingFields.append(Field("binding", "Binding", children: entry))
                }
                if !bindingFields.isEmpty { children.append(Field("bindings", "Bindings", children: bindingFields, isList: true)) }
                exchangeFields.append(Field("exchange", "Exchange", children: children))
            }
            var routeFields: [Field] = []
            for key in routeOrder {
                guard let route = routes[key] else { continue }
                routeFields.append(Field("route", "Route", children: [
                    Field("exchange", "Exchange", .string(key.exchange)), Field("routing_key", "Routing key", .string(key.routingKey)),
                    Field("publishes", "Publishes", .int(route.publishes)),
                    Field("queues", "Queues", children: route.queues.map { Field("queue", "Queue", .string($0)) }, isList: true),
                ]))
            }
            var fields: [Field] = []
            fields.append(Field("exchanges", "Exchanges", children: exchangeFields, isList: true))
            fields.append(Field("queues", "Queues", children: listedQueues.map { queue in
                var children = [Field("name", "Name", .string(queue.name))]
                if queue.deleted { children.append(Field("deleted", "Deleted", .bool(true))) }
                return Field("queue", "Queue", children: children)
            }, isList: true))
            fields.append(Field("routes", "Routes", children: routeFields, isList: true))
            if publishesNotListed > 0 { fields.append(Field("publishes_not_listed", "Publishes not listed", .int(publishesNotListed))) }
            for (key, label, notListed): (FieldKey, String, Int) in [("exchanges_not_listed", "Exchanges not listed", exchangeHistory.notListed),
                                                                     ("queues_not_listed", "Queues not listed", queueHistory.notListed),
                                                                     ("bindings_not_listed", "Bindings not listed", bindingHistory.notListed)] where notListed > 0 {
                fields.append(Field(key, label, .int(notListed)))
            }
            fields.append(Field("routed_into", "Routed into", children: routedIntoOrder.map { queue in
                Field("queue", "Queue", children: [Field("queue", "Queue", .string(queue)),
                                                   Field("publishes", "Publishes", .int(routedInto[queue] ?? 0))])
            }, isList: true))
            let counts = "\(exchangeFields.count) exchange\(exchangeFields.count == 1 ? "" : "s"), \(listedQueues.count) queue\(listedQueues.count == 1 ? "" : "s"), \(listedBindings.count) binding\(listedBindings.count == 1 ? "" : "s")"
            let notListed = exchangeHistory.notListed + queueHistory.notListed + bindingHistory.notListed
            let more = notListed == 0 ? "" : ", and \(notListed) more past the first \(AMQPBroker.maxListed) of each, not listed"
            return AnalysisRecord(protocolName: "amqp", kind: .topology, frames: [],
                                  message: "\(counts) seen\(more) (what was made before the capture is not seen)", fields: fields)
        }
    }
}
