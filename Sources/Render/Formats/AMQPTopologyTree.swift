import Dissection

/// AMQP's topology record (`analysis: topology`, made by the AMQP broker model) drawn as an
/// indented tree, exchange → binding key → queue, then the queues and, when asked, where each
/// exchange and routing key published to was routed: a view of the record's fields, the text's
/// and the table's alike.
///
///     exchange 'logs' (topic, durable)
///       'kern.*' → queue 'kern'
///     queues: 'kern', 'audit' (deleted)
///     published to 'logs' with 'kern.info' (2×) → 'kern'
enum AMQPTopologyTree {
    /// The tree's lines, each indented by two spaces and more; `routes`: the `published to` lines too.
    static func lines(_ fields: [Field], routes: Bool) -> [String] {
        var lines: [String] = []
        for exchange in list(fields, "exchanges") {
            let c = exchange.children
            let type = string(c, "type")
            var flags = [type]
            if flag(c, "durable") { flags.append("durable") }
            if flag(c, "auto_delete") { flags.append("auto-delete") }
            if flag(c, "internal") { flags.append("internal") }
            if flag(c, "predeclared") { flags.append("predeclared") }
            if let alternate = c.first(where: { $0.key == "alternate_exchange" })?.value.stringValue {
                flags.append("alternate-exchange '\(alternate)'")
            }
            if flag(c, "deleted") { flags.append("deleted") }
            lines.append("  exchange '\(string(c, "name"))' (\(flags.joined(separator: ", ")))")
            for binding in list(c, "bindings") {
                let b = binding.children
                // A fanout or headers exchange ignores the binding key; a headers one matches its arguments.
                let key = type == "fanout" || type == "headers" ? "" : "'\(string(b, "routing_key"))' "
                let arguments = b.first { $0.key == "arguments" }?.children ?? []
                let matched = type == "headers" && !arguments.isEmpty
                    ? "[" + arguments.map { "\($0.key)=\($0.value.stringValue ?? "")" }.joined(separator: " ") + "] " : ""
                let target = b.contains { $0.key == "exchange" } ? "exchange '\(string(b, "exchange"))'" : "queue '\(string(b, "queue"))'"
                lines.append("    \(key)\(matched)→ \(target)\(flag(b, "removed") ? " (removed)" : "")")
            }
        }
        let queues = list(fields, "queues")
        if !queues.isEmpty {
            lines.append("  queues: " + queues.map { "'\(string($0.children, "name"))'\(flag($0.children, "deleted") ? " (deleted)" : "")" }
                .joined(separator: ", "))
        }
        // Past the model's limit: counted, not listed.
        for (key, noun) in [("exchanges_not_listed", "exchanges"), ("queues_not_listed", "queues"), ("bindings_not_listed", "bindings")] {
            if let notListed = fields.first(where: { $0.key == key })?.value.intValue {
                lines.append("  … \(notListed) more \(noun), not listed")
            }
        }
        if routes {
            for route in list(fields, "routes") {
                let r = route.children
                let exchange = string(r, "exchange")
                let queues = list(r, "queues").compactMap(\.value.stringValue)
                let publishes = r.first { $0.key == "publishes" }?.value.intValue ?? 0
                lines.append("  published to '\(exchange.isEmpty ? "(default)" : exchange)' with '\(string(r, "routing_key"))' (\(publishes)×) → "
                    + (queues.isEmpty ? "no queue" : queues.map { "'\($0)'" }.joined(separator: ", ")))
            }
        }
        if let notListed = fields.first(where: { $0.key == "publishes_not_listed" })?.value.intValue {
            lines.append("  … \(notListed) publishes to other exchanges and routing keys, past the \(list(fields, "routes").count) listed")
        }
        return lines
    }

    private static func list(_ fields: [Field], _ key: String) -> [Field] {
        fields.first { $0.key == key }?.children ?? []
    }

    private static func string(_ fields: [Field], _ key: String) -> String {
        fields.first { $0.key == key }?.value.stringValue ?? ""
    }

    private static func flag(_ fields: [Field], _ key: String) -> Bool {
        if case .bool(true)? = fields.first(where: { $0.key == key })?.value { return true }
        return false
    }
}
