@testable import AMQP
import Dissection
import Testing
import TestSupport

/// The broker model across connections (issue #29): RabbitMQ's routing of each exchange type,
/// exchange-to-exchange bindings and alternate exchanges, and the records of what was unroutable
/// or routed otherwise than the bindings say.
@Suite("AMQP broker model: topology and routing")
struct AMQPBrokerTests {
    @Test("topic keys match as RabbitMQ matches them: * one word, # zero or more",
          arguments: [
              ("*.orange.*", "quick.orange.rabbit", true), ("*.*.rabbit", "quick.orange.rabbit", true),
              ("lazy.#", "lazy.orange.elephant", true), ("*.orange.*", "quick.orange.fox", true),
              ("lazy.#", "lazy.brown.fox", true), ("*.*.rabbit", "lazy.pink.rabbit", true),
              ("*.orange.*", "quick.brown.fox", false), ("*.orange.*", "orange", false),
              ("*.orange.*", "quick.orange.male.rabbit", false), ("lazy.#", "lazy", true),
              ("lazy.#", "lazy.orange.male.rabbit", true), ("#", "", true), ("#", "a.b.c", true),
              ("a.#.c", "a.c", true), ("a.#.c", "a.b.b.c", true), ("a.#.c", "a.b", false),
              ("a.*", "a.", true), ("a.*", "a", false), ("", "", true), ("", "a", false),
          ])
    func topic(pattern: String, key: String, matches: Bool) {
        #expect(AMQPBroker.topicMatches(pattern: pattern, routingKey: key) == matches)
    }

    static func table(_ entries: [(String, AMQPFieldValue)]) -> AMQPFieldTable {
        AMQPFieldTable(entries: entries.map { AMQPFieldTable.Entry(name: $0.0, type: nil, value: $0.1, range: 0..<0) })
    }

    static func string(_ s: String) -> AMQPFieldValue {
        .longString(AMQPLongString(bytes: Array(s.utf8)[...], declaredLength: s.utf8.count))
    }

    @Test("headers bindings match by x-match all, any, all-with-x and any-with-x; a void value asks for presence")
    func headers() {
        let message = Self.table([("format", Self.string("pdf")), ("type", Self.string("report")), ("x-trace", Self.string("1"))])
        func matches(_ binding: [(String, AMQPFieldValue)]) -> Bool {
            AMQPBroker.headersMatch(binding: Self.table(binding), headers: message)
        }
        #expect(matches([("x-match", Self.string("all")), ("format", Self.string("pdf")), ("type", Self.string("report"))]))
        #expect(!matches([("x-match", Self.string("all")), ("format", Self.string("pdf")), ("type", Self.string("log"))]))
        #expect(matches([("format", Self.string("pdf"))]), "all is the default")
        #expect(matches([("x-match", Self.string("any")), ("format", Self.string("zip")), ("type", Self.string("report"))]))
        #expect(!matches([("x-match", Self.string("any")), ("format", Self.string("zip"))]))
        // x- arguments count only with the -with-x modes.
        #expect(matches([("x-match", Self.string("all")), ("format", Self.string("pdf")), ("x-trace", Self.string("2"))]))
        #expect(!matches([("x-match", Self.string("all-with-x")), ("format", Self.string("pdf")), ("x-trace", Self.string("2"))]))
        #expect(matches([("x-match", Self.string("any-with-x")), ("x-trace", Self.string("1"))]))
        #expect(matches([("type", .void)]))
        #expect(!matches([("owner", .void)]))
        #expect(!AMQPBroker.headersMatch(binding: Self.table([("a", Self.string("b"))]), headers: nil))
    }

    @Test("header values compare as RabbitMQ's headers exchange compares them: numbers by value whatever their width, strings and byte arrays by bytes, nested values with their types")
    func headerValues() {
        func match(_ message: AMQPFieldValue, _ binding: AMQPFieldValue) -> Bool {
            AMQPBroker.headersMatch(binding: Self.table([("k", binding)]), headers: Self.table([("k", message)]))
        }
        let bytes = AMQPFieldValue.bytes(AMQPLongString(bytes: Array("pdf".utf8)[...], declaredLength: 3))
        #expect(match(.int64(1), .int32(1)))
        #expect(match(.uint8(200), .int16(200)))
        #expect(match(.int8(-1), .int64(-1)))
        #expect(!match(.uint32(1), .int32(-1)))
        #expect(match(.double(1.0), .int32(1)))
        #expect(match(.float(2.5), .double(2.5)))
        #expect(!match(.double(1.5), .int32(1)))
        #expect(match(.timestamp(5), .int64(5)))
        #expect(!match(Self.string("1"), .int32(1)), "a string is not a number")
        #expect(match(bytes, Self.string("pdf")), "a long string and a byte array are both bytes")
        #expect(!match(.boolean(true), .int8(1)))
        #expect(match(.boolean(false), .boolean(false)))
        #expect(match(.decimal(scale: 2, mantissa: 150), .decimal(scale: 2, mantissa: 150)))
        #expect(!match(.decimal(scale: 1, mantissa: 15), .decimal(scale: 2, mantissa: 150)))
        // Inside an array or a table the types count too, and byte ranges never do.
        func array(_ values: [AMQPFieldValue], at start: Int) -> AMQPFieldValue {
            .array(AMQPFieldArray(items: values.enumerated().map { AMQPFieldArray.Item(type: 0, value: $1, range: (start + $0)..<(start + $0 + 1)) }))
        }
        #expect(match(array([.int32(1), Self.string("a")], at: 0), array([.int32(1), Self.string("a")], at: 40)))
        #expect(!match(array([.int32(1)], at: 0), array([.int64(1)], at: 0)))
        // The first of two headers of one name is the one compared.
        let twice = Self.table([("k", .int32(1)), ("k", .int32(2))])
        #expect(AMQPBroker.headersMatch(binding: Self.table([("k", .int32(1))]), headers: twice))
        #expect(!AMQPBroker.headersMatch(binding: Self.table([("k", .int32(2))]), headers: twice))
    }

    /// A broker fed `events` in order on stream 0, frame 1, 2, …; the records it finishes with.
    static func records(_ broker: AMQPBroker, _ events: [AMQPBrokerEvent.Kind]) -> [AnalysisRecord] {
        for (i, kind) in events.enumerated() {
            var pdu = DissectedPDU(protocolName: "amqp", summary: "", fields: [], wireLength: 0)
            pdu.packet = AMQPBrokerEvent(kind: kind, channel: 1)
            let context = StreamContext(frame: i + 1, time: Timestamp(seconds: 0, nanoseconds: 0), stream: 0,
                                        source: "c", destination: "s")
            let event = OutputEvent.pdu(PDUEvent(context, .toServer, pdu))
            #expect(broker.reads(event))
            broker.observe(broker.forwarded(event)!)
        }
        var records: [AnalysisRecord] = []
        broker.finish { records.append($0) }
        return records
    }

    static func bind(_ source: String, _ destination: String, key: String = "", toExchange: Bool = false,
                     arguments: AMQPFieldTable? = nil) -> AMQPBrokerEvent.Kind {
        .bound(AMQPBrokerEvent.Binding(source: source, destination: destination, toExchange: toExchange, routingKey: key, arguments: arguments))
    }

    static func declare(_ name: String, _ type: String, alternate: String? = nil) -> AMQPBrokerEvent.Kind {
        .exchangeDeclared(name: name, type: type, durable: false, autoDelete: false, isInternal: false, alternate: alternate)
    }

    static func publish(_ exchange: String, _ key: String, mandatory: Bool = false, frame: Int) -> AMQPBrokerEvent.Kind {
        .published(AMQPBrokerEvent.Publish(exchange: exchange, routingKey: key, mandatory: mandatory, headers: nil, frame: frame))
    }

    @Test("exchange-to-exchange bindings and alternate exchanges route on; a binding removed routes no more")
    func routing() {
        let broker = AMQPBroker()
        _ = Self.records(broker, [
            Self.declare("logs", "topic"), Self.declare("all", "fanout"), Self.declare("lost", "fanout"),
            Self.declare("main", "direct", alternate: "lost"),
            Self.bind("logs", "kern", key: "kern.*"), Self.bind("logs", "all", key: "#", toExchange: true),
            Self.bind("all", "archive"), Self.bind("lost", "dead-letters"), Self.bind("main", "orders", key: "order"),
        ])
        #expect(broker.route(exchange: "logs", routingKey: "kern.critical", headers: nil).queues == ["archive", "kern"])
        #expect(broker.route(exchange: "logs", routingKey: "app.info", headers: nil).queues == ["archive"])
        #expect(broker.route(exchange: "main", routingKey: "order", headers: nil).queues == ["orders"])
        #expect(broker.route(exchange: "main", routingKey: "refund", headers: nil).queues == ["dead-letters"])
        #expect(broker.route(exchange: "amq.fanout", routingKey: "x", headers: nil) == ([], true), "predeclared, no bindings")
        #expect(broker.route(exchange: "elsewhere", routingKey: "x", headers: nil).known == false)
        #expect(broker.route(exchange: "", routingKey: "orders", headers: nil) == (["orders"], true), "default exchange, a queue seen")
        #expect(broker.route(exchange: "", routingKey: "unseen", headers: nil).known == false)
        _ = Self.records(broker, [.unbound(AMQPBrokerEvent.Binding(source: "logs", destination: "all", toExchange: true, routingKey: "#"))])
        #expect(broker.route(exchange: "logs", routingKey: "kern.critical", headers: nil).queues == ["kern"])
    }

    @Test("an unbind removes the binding with the same arguments: in any order, nested tables by value, not by where they were in the frame")
    func unbindArguments() {
        func arguments(_ entries: [(String, AMQPFieldValue)], at start: Int) -> AMQPFieldTable {
            AMQPFieldTable(entries: entries.enumerated().map { AMQPFieldTable.Entry(name: $1.0, type: nil, value: $1.1, range: (start + $0)..<(start + $0 + 1)) })
        }
        let nested = AMQPFieldValue.table(arguments([("region", Self.string("eu"))], at: 30))
        let broker = AMQPBroker()
        _ = Self.records(broker, [
            Self.declare("match", "headers"),
            Self.bind("match", "eu", arguments: arguments([("x-match", Self.string("all")), ("where", nested)], at: 0)),
            Self.bind("match", "pdf", arguments: arguments([("format", Self.string("pdf"))], at: 0)),
        ])
        let eu = Self.table([("where", .table(arguments([("region", Self.string("eu"))], at: 90)))])
        #expect(broker.route(exchange: "match", routingKey: "", headers: eu).queues == ["eu"])
        // The same arguments, another order, the nested table read at other offsets.
        _ = Self.records(broker, [.unbound(AMQPBrokerEvent.Binding(source: "match", destination: "eu", toExchange: false, routingKey: "",
                                                                   arguments: arguments([("where", .table(arguments([("region", Self.string("eu"))], at: 70))),
                                                                                         ("x-match", Self.string("all"))], at: 50)))])
        #expect(broker.route(exchange: "match", routingKey: "", headers: eu).queues == [])
        // Other arguments unbind nothing.
        _ = Self.records(broker, [.unbound(AMQPBrokerEvent.Binding(source: "match", destination: "pdf", toExchange: false, routingKey: "",
                                                                   arguments: arguments([("format", Self.string("zip"))], at: 0)))])
        #expect(broker.route(exchange: "match", routingKey: "", headers: Self.table([("format", Self.string("pdf"))])).queues == ["pdf"])
    }

    @Test("an unroutable publish is recorded, with its basic.return when mandatory; a return of a routed one is a mismatch")
    func unroutableAndMismatch() throws {
        let broker = AMQPBroker()
        let records = Self.records(broker, [
            Self.declare("logs", "topic"),                                                        // 1
            Self.bind("logs", "kern", key: "kern.*"),                                             // 2
            Self.publish("logs", "app.info", frame: 3),                                           // 3: dropped silently
            Self.publish("logs", "app.warn", mandatory: true, frame: 4),                          // 4
            .returned(replyCode: 312, exchange: "logs", routingKey: "app.warn"),                  // 5
            Self.publish("logs", "kern.oops", mandatory: true, frame: 6),                         // 6: routed to kern …
            .returned(replyCode: 312, exchange: "logs", routingKey: "kern.oops"),                 // 7: … but returned
            Self.publish("", "nowhere", mandatory: true, frame: 8),                               // 8: a queue never seen
            .returned(replyCode: 312, exchange: "", routingKey: "nowhere"),                       // 9
            .delivered(queue: "kern", exchange: "logs", routingKey: "kern.oops"),                 // 10: routed there
            .delivered(queue: "audit", exchange: "logs", routingKey: "kern.oops"),                // 11: not by any binding seen
        ])
        let unroutable = records.filter { $0.kind == .unroutable }
        try #require(unroutable.count == 3)
        #expect(unroutable[0].frames == [3])
        #expect(unroutable[0].message == "no binding on topic exchange 'logs' matches 'app.info': not mandatory, so the broker dropped it silently (bindings made before the capture are not seen)")
        #expect(unroutable[1].frames == [4, 5])
        #expect(unroutable[1].message.hasSuffix("the broker returned it (basic.return #5)"))
        #expect(unroutable[2].frames == [8, 9])
        #expect(unroutable[2].message.hasPrefix("no queue is named 'nowhere'"))
        let mismatches = records.filter { $0.kind == .routingMismatch }
        try #require(mismatches.count == 2)
        #expect(mismatches[0].frames == [6, 7])
        #expect(mismatches[1].frames == [11])
        #expect(mismatches[1].message.hasPrefix("delivered from queue 'audit'"))
        let topology = try #require(records.first { $0.kind == .topology })
        let logs = try #require(topology.fields.first { $0.key == "exchanges" }?.children.first {
            $0.children.first { $0.key == "name" }?.value.stringValue == "logs"
        })
        #expect(logs.children.first { $0.key == "type" }?.value.stringValue == "topic")
        let bindings = logs.children.first { $0.key == "bindings" }?.children ?? []
        #expect(bindings.map { $0.children.compactMap(\.value.stringValue) }.contains(["kern.*", "kern"]))
    }

    @Test("a declare refused with 406 names the first declare of that name, on any connection, and what each asked")
    func declareRefused() throws {
        let broker = AMQPBroker()
        let records = Self.records(broker, [
            .declareRequested(entity: "queue", name: "orders", settings: "durable=true"),                  // 1
            .declareRequested(entity: "queue", name: "orders", settings: "durable=false"),                 // 2
            .declareRefused(entity: "queue", name: "orders", requestFrame: 2, replyText: "PRECONDITION_FAILED"), // 3
            .declareRequested(entity: "queue", name: "fresh", settings: "durable=false"),                  // 4
            .declareRefused(entity: "queue", name: "fresh", requestFrame: 4, replyText: "PRECONDITION_FAILED"),  // 5: no earlier one
        ])
        let refused = records.filter { $0.kind == .declareRefused }
        try #require(refused.count == 1)
        #expect(refused[0].frames == [1, 2, 3])
        #expect(refused[0].message == "the queue.declare of 'orders' #2 asked durable=false; the broker refused it (PRECONDITION_FAILED): 'orders' was declared first by #1 on stream 0 with durable=true")
    }

    @Test("memory stays bounded: unroutable publishes past the first 1,000 and routes past 16,384 are counted, not kept")
    func bounded() throws {
        let broker = AMQPBroker()
        var events: [AMQPBrokerEvent.Kind] = [Self.declare("logs", "topic")]
        let publishes = AMQPBroker.maxRoutes + 10
        for i in 0..<publishes { events.append(Self.publish("logs", "key.\(i)", frame: i + 2)) }
        let records = Self.records(broker, events)
        let unroutable = records.filter { $0.kind == .unroutable }
        #expect(unroutable.count == AMQPBroker.maxRecords + 1)
        #expect(unroutable.last?.message == "\(publishes - AMQPBroker.maxRecords) more publishes routed nowhere")
        let topology = try #require(records.first { $0.kind == .topology })
        #expect(topology.fields.first { $0.key == "publishes_not_listed" }?.value.intValue == 10)
        #expect(topology.fields.first { $0.key == "routes" }?.children.count == AMQPBroker.maxRoutes)
    }

    @Test("memory stays bounded: exchanges, queues and bindings past the first 65,536 are counted, not listed, and route all the same")
    func boundedTopology() throws {
        let broker = AMQPBroker()
        let past = 5
        var events: [AMQPBrokerEvent.Kind] = [Self.declare("x", "topic")]
        // Each binding names a queue of its own: both lists fill.
        for i in 0..<(AMQPBroker.maxListed + past) { events.append(Self.bind("x", "q\(i)", key: "k.\(i)")) }
        for i in 0..<(AMQPBroker.maxListed + past) { events.append(Self.declare("e\(i)", "fanout")) }
        let last = AMQPBroker.maxListed + past - 1
        events.append(Self.publish("x", "k.\(last)", frame: events.count + 1))
        let records = Self.records(broker, events)
        let topology = try #require(records.first { $0.kind == .topology })
        let value = { (key: String) in topology.fields.first { $0.key == key }?.value.intValue }
        #expect(value("queues_not_listed") == past)
        #expect(value("bindings_not_listed") == past)
        // The first exchange, "x", is one of those listed: 1 + maxListed declared.
        #expect(value("exchanges_not_listed") == past + 1)
        #expect(topology.fields.first { $0.key == "queues" }?.children.count == AMQPBroker.maxListed)
        #expect(topology.message.contains("and \(3 * past + 1) more past the first \(AMQPBroker.maxListed) of each, not listed"))
        // A binding past the limit still routes.
        let route = try #require(topology.fields.first { $0.key == "routes" }?.children.first)
        #expect(route.children.first { $0.key == "queues" }?.children.map(\.value) == [.string("q\(last)")])
        #expect(!records.contains { $0.kind == .unroutable })
    }

    /// The binding index (what routing reads the bindings through) against the bindings in a
    /// list, matched one by one: random binding keys and routing keys (`*`, `#`, empty words,
    /// the words of both), bindings made and removed at random by identity, source and
    /// destination, and each lookup compared, in the order made. Seeded: the same cases each run.
    @Test("the binding index finds the bindings a search of them all finds, in the order made")
    func bindingIndexAsSearch() {
        var random = SplitMix64(seed: 0xB1_4D)
        let words = ["a", "b", "*", "#", "", "c.d"]
        func key(_ most: Int, _ from: [String]) -> String {
            (0..<Int.random(in: 1...most, using: &random)).map { _ in from.randomElement(using: &random)! }.joined(separator: ".")
        }
        func binding() -> AMQPBrokerEvent.Binding {
            AMQPBrokerEvent.Binding(source: ["x", "y"].randomElement(using: &random)!, destination: ["q1", "q2", "x"].randomElement(using: &random)!,
                                    toExchange: Bool.random(using: &random), routingKey: key(4, words), arguments: nil)
        }
        var index = AMQPBindingIndex()
        var list: [(id: Int, binding: AMQPBrokerEvent.Binding)] = []
        var matched = 0
        for _ in 0..<1500 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let b = binding()
                list.append((index.add(b), b))
            case 6:
                let b = binding()
                let same = list.filter { $0.binding == b }.map(\.id)
                #expect(index.matching(b, same: ==) == same)
                for id in same { index.remove(id) }
                list.removeAll { $0.binding == b }
            case 7:
                let name = ["q1", "q2", "x"].randomElement(using: &random)!, exchange = Bool.random(using: &random)
                let to = list.filter { $0.binding.destination == name && $0.binding.toExchange == exchange }.map(\.id)
                #expect(index.to(name, exchange: exchange) == to)
                for id in to { index.remove(id) }
                list.removeAll { $0.binding.destination == name && $0.binding.toExchange == exchange }
            default:
                let source = ["x", "y"].randomElement(using: &random)!
                #expect(index.from(source) == list.filter { $0.binding.source == source }.map(\.id))
            }
            for _ in 0..<2 {
                let source = ["x", "y"].randomElement(using: &random)!, routingKey = key(5, ["a", "b", "", "c", "*", "#"])
                let ofSource = list.filter { $0.binding.source == source }
                let topic = ofSource.filter { AMQPBroker.topicMatches(pattern: $0.binding.routingKey, routingKey: routingKey) }.map(\.id)
                #expect(index.from(source, topic: routingKey) == topic, "\(source) \(routingKey)")
                #expect(index.from(source, key: routingKey) == ofSource.filter { $0.binding.routingKey == routingKey }.map(\.id))
                matched += topic.isEmpty ? 0 : 1
            }
        }
        // Enough lookups found something for the comparison to mean something.
        #expect(matched > 500, "\(matched)")
        for (id, _) in list { index.remove(id) }
        #expect(index.bindings.isEmpty && index.from("x").isEmpty && index.from("y").isEmpty)
    }
}
