import Foundation
import Testing

/// The broker model's routing against what RabbitMQ actually did in the samples (real traffic,
/// samples/README.md): every message a queue gave out (basic.get-ok, basic.deliver, with the
/// queue the connection attributed it to) was routed to that queue by the simulation of its
/// exchange and routing key, and nothing is a mismatch.
@Suite("AMQP routing against RabbitMQ's deliveries in the samples")
struct AMQPRoutingTests {
    @Test("each queue's deliveries are where the bindings seen route their exchange and routing key",
          arguments: Repo.sampleCaptures().filter { $0.hasPrefix("amqp-") })
    func deliveriesAgree(sample: String) throws {
        let result = try dissect(["--format", "json", Repo.samples.appendingPathComponent(sample).path])
        let lines = jsonLines(result.stdout)
        #expect(!lines.contains { $0["analysis"] as? String == "routing_mismatch" }, "\(sample)")
        let topology = lines.first { $0["analysis"] as? String == "topology" }
        var routes: [String: Set<String>] = [:]
        for route in topology?["routes"] as? [[String: Any]] ?? [] {
            let key = "\(route["exchange"] as? String ?? "?") \(route["routing_key"] as? String ?? "?")"
            routes[key] = Set(route["queues"] as? [String] ?? [])
        }
        var checked = 0
        for line in lines {
            guard let amqp = line["amqp"] as? [String: Any], let method = amqp["method"] as? String,
                  method == "basic.get-ok" || method == "basic.deliver", let queue = amqp["queue"] as? String,
                  let arguments = amqp["arguments"] as? [String: Any] else { continue }
            let key = "\(arguments["exchange"] as? String ?? "") \(arguments["routing_key"] as? String ?? "")"
            // A message published before the capture has no route in it.
            guard let simulated = routes[key] else { continue }
            #expect(simulated.contains(queue), "\(sample) frame \(line["frame"] ?? "?"): \(key) delivered from \(queue), routed to \(simulated)")
            checked += 1
        }
        if sample == "amqp-exchanges.pcap" {
            // Direct, fanout (twice), topic, headers (twice), the exchange-to-exchange topic route.
            #expect(checked >= 7, "\(checked)")
            // RabbitMQ gave out two of the three headers publishes: the third is unroutable.
            let unroutable = lines.filter { $0["analysis"] as? String == "unroutable" }
            #expect(unroutable.compactMap { $0["routing_key"] as? String }.sorted() == ["", "invoice.paid", "sensors.kitchen.humidity"])
        }
        if sample == "amqp-routing.pcap" {
            // The tutorials' topologies: 21 messages RabbitMQ gave out by basic.get, 4 deliveries;
            // among them the timestamp 1700000000 that RabbitMQ routed to the integer's binding,
            // and the one of three nested tables RabbitMQ routed to the nested table's binding.
            #expect(checked == 25, "\(checked)")
            #expect(lines.contains { ($0["amqp"] as? [String: Any])?["queue"] as? String == "pd.when" })
            #expect(lines.contains { ($0["amqp"] as? [String: Any])?["queue"] as? String == "pd.nested" })
            // debug; the tutorial's three topic keys no binding takes; the zip, the boolean, the
            // nested table reordered and the other nested value, for nobody (as RabbitMQ did:
            // pd.nested gave out one message); the mandatory one RabbitMQ returned.
            let unroutable = lines.filter { $0["analysis"] as? String == "unroutable" }
            #expect(unroutable.compactMap { $0["routing_key"] as? String }.sorted()
                    == ["", "", "", "", "debug", "nobody", "orange", "quick.brown.fox", "quick.orange.male.rabbit"])
            #expect(unroutable.contains { $0["routing_key"] as? String == "nobody" && $0["return_frame"] != nil })
        }
    }

    @Test("--two-pass: a publish names its route and its confirm, a delivery its acknowledgement")
    func twoPass() throws {
        let text = try dissect(["--two-pass", Repo.samples.appendingPathComponent("amqp-consume-ack.pcap").path]).stdout
        let summaries = text.split(separator: "\n").filter { $0.hasPrefix("#") }
        func line(_ prefix: String, _ contains: String) -> Substring? {
            summaries.first { $0.hasPrefix(prefix + " ") && $0.contains(contains) }
        }
        #expect(line("#22", "basic.publish")?.hasSuffix("[routed to 'pd.work'] [confirmed by #26 in 405 µs]") == true)
        #expect(line("#60", "delivery-tag=1 ")?.hasSuffix("[acked by #61 in 574 µs]") == true)
        #expect(line("#65", "delivery-tag=4 ")?.hasSuffix("[rejected by #69 in 844 µs, requeued]") == true)
        // The mandatory publish the broker returned: unroutable though its queue was never declared.
        #expect(line("#52", "basic.publish")?.contains("[UNROUTABLE: no queue is named 'pd.nowhere']") == true)
        let json = jsonLines(try dissect(["--format", "json", "--two-pass", Repo.samples.appendingPathComponent("amqp-exchanges.pcap").path]).stdout)
        let publishes = json.compactMap { $0["amqp"] as? [String: Any] }.filter { $0["method"] as? String == "basic.publish" }
        let routings = publishes.compactMap { $0["routing"] as? [String: Any] }
        #expect(routings.count == publishes.count)
        #expect(routings.filter { $0["unroutable"] as? Bool == true }.count == 3)
    }

    /// Checked against RabbitMQ (samples/README.md): of three messages with a nested table in
    /// their headers, it gave `pd.nested` (bound with meta={a=1, b=x}) the one with the same
    /// entries in the same order, not the one with them reordered nor the one with another value.
    @Test("--two-pass: a nested table in the headers routes as RabbitMQ routed it, entries in order")
    func nestedHeaders() throws {
        let text = try dissect(["--two-pass", Repo.samples.appendingPathComponent("amqp-routing.pcap").path]).stdout
        let lines = text.split(separator: "\n").map(String.init)
        // Each publish's summary line, then its body's line (quoted text) after it.
        func route(of body: String) -> String? {
            guard let at = lines.firstIndex(where: { $0.contains("AMQP body") && $0.contains("\"\(body)\"") }) else { return nil }
            return lines[..<at].last { $0.contains("basic.publish exchange=pd.headers") }
        }
        #expect(route(of: "the same nested table")?.contains("[routed to 'pd.nested']") == true)
        #expect(route(of: "the nested table reordered")?.contains("[UNROUTABLE: no binding on exchange 'pd.headers'") == true)
        #expect(route(of: "another nested value")?.contains("[UNROUTABLE: no binding on exchange 'pd.headers'") == true)
    }
}
