import Dissection
@testable import Render
import Testing

// The topology record's fields as the AMQP broker model makes them (`AMQPBroker.topologyRecord`),
// built by hand: the tree is a view of them alone.
@Suite("AMQP topology tree")
struct AMQPTopologyTreeTests {
    private static func exchange(_ name: String, _ type: String, flags: [String] = [], alternate: String? = nil,
                                 bindings: [[Field]] = []) -> Field {
        var children = [Field("name", "Name", .string(name)), Field("type", "Type", .string(type)),
                        Field("durable", "Durable", .bool(flags.contains("durable")))]
        for flag in ["auto_delete", "internal", "predeclared", "deleted"] where flags.contains(flag) {
            children.append(Field(FieldKey(dynamic: flag), flag, .bool(true)))
        }
        if let alternate { children.append(Field("alternate_exchange", "Alternate exchange", .string(alternate))) }
        if !bindings.isEmpty {
            children.append(Field("bindings", "Bindings", children: bindings.map { Field("binding", "Binding", children: $0) }, isList: true))
        }
        return Field("exchange", "Exchange", children: children)
    }

    private static func binding(_ key: String, queue: String? = nil, exchange: String? = nil, arguments: [(String, String)] = [],
                                removed: Bool = false) -> [Field] {
        var entry = [Field("routing_key", "Routing key", .string(key))]
        if let queue { entry.append(Field("queue", "Queue", .string(queue))) }
        if let exchange { entry.append(Field("exchange", "Exchange", .string(exchange))) }
        if !arguments.isEmpty { entry.append(Field("arguments", "Arguments", children: arguments.map { Field(FieldKey(dynamic: $0.0), $0.0, .string($0.1)) })) }
        if removed { entry.append(Field("removed", "Removed", .bool(true))) }
        return entry
    }

    private static let fields: [Field] = [
        Field("exchanges", "Exchanges", children: [
            exchange("logs", "topic", flags: ["durable"], bindings: [binding("kern.*", queue: "kern"),
                                                                     binding("#", exchange: "archive", removed: true)]),
            exchange("all", "fanout", flags: ["auto_delete", "deleted"], bindings: [binding("ignored", queue: "a")]),
            exchange("match", "headers", alternate: "all", bindings: [binding("", queue: "pdf", arguments: [("x-match", "all"), ("format", "pdf")])]),
            exchange("amq.direct", "direct", flags: ["durable", "predeclared"]),
        ], isList: true),
        Field("queues", "Queues", children: [
            Field("queue", "Queue", children: [Field("name", "Name", .string("kern"))]),
            Field("queue", "Queue", children: [Field("name", "Name", .string("a")), Field("deleted", "Deleted", .bool(true))]),
        ], isList: true),
        Field("routes", "Routes", children: [
            Field("route", "Route", children: [
                Field("exchange", "Exchange", .string("")), Field("routing_key", "Routing key", .string("kern")),
                Field("publishes", "Publishes", .int(3)),
                Field("queues", "Queues", children: [Field("queue", "Queue", .string("kern"))], isList: true),
            ]),
            Field("route", "Route", children: [
                Field("exchange", "Exchange", .string("logs")), Field("routing_key", "Routing key", .string("app.info")),
                Field("publishes", "Publishes", .int(1)), Field("queues", "Queues", children: [], isList: true),
            ]),
        ], isList: true),
        Field("publishes_not_listed", "Publishes not listed", .int(7)),
        Field("exchanges_not_listed", "Exchanges not listed", .int(2)),
        Field("queues_not_listed", "Queues not listed", .int(3)),
        Field("bindings_not_listed", "Bindings not listed", .int(4)),
    ]

    @Test("exchanges with their flags, bindings by key (none for fanout and headers, a headers binding's arguments), queues, routes")
    func tree() {
        let lines = AMQPTopologyTree.lines(Self.fields, routes: true)
        #expect(lines == [
            "  exchange 'logs' (topic, durable)",
            "    'kern.*' → queue 'kern'",
            "    '#' → exchange 'archive' (removed)",
            "  exchange 'all' (fanout, auto-delete, deleted)",
            "    → queue 'a'",
            "  exchange 'match' (headers, alternate-exchange 'all')",
            "    [x-match=all format=pdf] → queue 'pdf'",
            "  exchange 'amq.direct' (direct, durable, predeclared)",
            "  queues: 'kern', 'a' (deleted)",
            "  … 2 more exchanges, not listed",
            "  … 3 more queues, not listed",
            "  … 4 more bindings, not listed",
            "  published to '(default)' with 'kern' (3×) → 'kern'",
            "  published to 'logs' with 'app.info' (1×) → no queue",
            "  … 7 publishes to other exchanges and routing keys, past the 2 listed",
        ])
        // The table's tree: the Exchanges table says where publishes went.
        #expect(AMQPTopologyTree.lines(Self.fields, routes: false) == lines.filter { !$0.hasPrefix("  published to ") })
    }

    @Test("the text renderer draws the tree under the record's message; the table under its heading")
    func renderers() {
        let record = AnalysisRecord(protocolName: "amqp", kind: .topology, frames: [], message: "4 exchanges, 2 queues, 5 bindings seen",
                                    fields: Self.fields)
        var text = TextRenderer(options: RenderOptions())
        var out = ""
        text.render(.analysis(record), into: &out)
        #expect(out.hasPrefix("AMQP analysis: topology: 4 exchanges, 2 queues, 5 bindings seen:\n  exchange 'logs' (topic, durable)\n    'kern.*' → queue 'kern'\n"))
        #expect(out.contains("\n  published to 'logs' with 'app.info' (1×) → no queue\n"))
        var table = TableRenderer(options: RenderOptions())
        var ignored = ""
        table.render(.analysis(record), into: &ignored)
        var summary = ""
        table.finish(into: &summary)
        #expect(summary.contains("Topology (exchange → binding key → queue; what was made before the capture is not seen)\n  exchange 'logs' (topic, durable)\n"))
        #expect(!summary.contains("published to 'logs'"))
    }
}
