import Foundation
import MQTT
import Testing

/// The MQTT flow analysis on a real capture (samples/mqtt-flows.pcap: raw-socket clients against
/// mosquitto, scripts/mqtt_flows.py): every kind of record, where it belongs, in every format.
@Suite("MQTT flow analysis on real traffic")
struct FlowAnalysisTests {
    static let sample = Repo.samples.appendingPathComponent("mqtt-flows.pcap").path

    static func lines(_ arguments: [String]) throws -> [[String: Any]] {
        let r = try dissect(["--format", "json"] + arguments + [sample])
        #expect(r.status == 0)
        return r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("each scenario gives its record: the kinds, the frames they concern, and the connection they are on")
    func records() throws {
        let lines = try Self.lines([])
        let records = lines.filter { $0["analysis"] != nil }
        func of(_ kind: String) -> [[String: Any]] { records.filter { $0["analysis"] as? String == kind } }
        #expect(of("unacknowledged").count == 2)
        #expect(of("unacknowledged").allSatisfy { $0["stream"] as? Int == 0 && $0["sender"] as? String == "server" })
        #expect(of("incomplete_flow").count == 1)
        #expect(of("incomplete_flow").first?["stream"] as? Int == 1)
        #expect(of("incomplete_flow").first?["step"] as? String == "received")
        #expect((of("incomplete_flow").first?["message"] as? String)?.contains("reset (RST)") == true)
        #expect(of("unexpected_ack").count == 3)
        #expect(of("packet_id_reused").count == 1)
        #expect(of("packet_id_reused").first?["packet_id"] as? Int == 7)
        #expect(of("receive_maximum_exceeded").first?["receive_maximum"] as? Int == 3)
        #expect(of("refused").first?["reason_code"] as? Int == 0x87)
        // The silent client: the broker closed it past 1.5 times its keep-alive of 2 s.
        #expect(of("keepalive_exceeded").first?["keep_alive"] as? Int == 2)
        #expect((of("keepalive_exceeded").first?["silence_ms"] as? Int ?? 0) > 3_000)
        #expect(of("closed_by_broker").compactMap { $0["cause"] as? String }.sorted() == ["keep-alive expired", "no cause in the capture"])
        #expect(of("no_disconnect").map { $0["stream"] as? Int } == [1])
        // The endings on the connection lines.
        let endings = lines.filter { $0["event"] as? String == "connection" }.compactMap { $0["ending"] as? String }
        #expect(endings.count == 18)
        #expect(endings.filter { $0.hasPrefix("client DISCONNECT #") }.count == 15)
        #expect(endings.filter { $0.hasPrefix("broker closed it") }.count == 2)
        // Across connections, after every PDU: the reconnect loop's backoff, the takeover.
        let last = lines.lastIndex { $0["mqtt"] != nil }!
        let backoff = try #require(of("reconnect").first { $0["client_id"] as? String == "flows-backoff" })
        #expect(lines.firstIndex { $0["client_id"] as? String == "flows-backoff" }! > last)
        #expect(backoff["connections"] as? Int == 4)
        let intervals = backoff["intervals_ms"] as? [Int] ?? []
        #expect(intervals.count == 3 && zip(intervals, [100, 200, 400]).allSatisfy { $0 >= $1 && $0 < $1 + 50 }, "\(intervals)")
        #expect((backoff["message"] as? String)?.contains("exponential backoff") == true)
        let takeover = try #require(of("session_takeover").first)
        #expect(takeover["client_id"] as? String == "flows-takeover")
        #expect(takeover["streams"] as? [Int] == [15, 16])
        // mosquitto closed the older connection: the takeover is the cause its own analysis lacked.
        #expect((takeover["message"] as? String)?.hasSuffix("the broker ended the older one, the takeover its cause (broker closed it)") == true)
        // The fan-out: each PUBLISH reached the three subscribers; the QoS 2 PUBLISH of the
        // client reset before PUBREL reached none, though flows-sub subscribed to flows/#.
        for q in 0..<3 {
            let topic = try #require(of("topic_delivery").first { $0["topic"] as? String == "flows/fan/q\(q)" })
            #expect(topic["publishes"] as? Int == 1 && topic["deliveries"] as? Int == 3)
        }
        #expect(of("undelivered").compactMap { $0["topic"] as? String } == ["flows/killed"])
        // The 5.0 broker's own word: four PUBACKs with 0x10 No matching subscribers.
        #expect(of("undelivered").filter { ($0["message"] as? String)?.contains("0x10 No matching subscribers") == true }.count == 4)
        // A connection's record names PDUs of its own connection (one across connections, any).
        let pdus = lines.filter { $0["mqtt"] != nil }
        for record in records where record["stream"] != nil {
            for frame in record["frames"] as? [Int] ?? [] {
                #expect(pdus.contains { $0["frame"] as? Int == frame && $0["stream"] as? Int == record["stream"] as? Int },
                        "\(record["analysis"]!) names frame \(frame)")
            }
        }
        // The PUBACK of the repeat's original names it; the DUP PUBLISH names the original.
        let dup = pdus.first { ($0["mqtt"] as? [String: Any])?["dup"] as? Bool == true }
        let flow = (dup?["mqtt"] as? [String: Any])?["flow"] as? [String: Any]
        #expect(flow?["state"] as? String == "retransmitted")
        // The connection lines carry the flows: 6 completed and 5 not before the fan-out, whose
        // 11 flows (2 of the publisher's, 9 of the broker's deliveries) all complete.
        let connections = lines.filter { $0["event"] as? String == "connection" }
        let flows = connections.compactMap { $0["flows"] as? [String: Any] }
        #expect(flows.count == 18)
        #expect(flows.map { $0["completed"] as? Int ?? -1 }.reduce(0, +) == 6 + 6)
        #expect(flows.map { $0["incomplete"] as? Int ?? -1 }.reduce(0, +) == 5)
    }

    @Test("a will published after an abrupt close is linked to its client, in every format")
    func will() throws {
        let sample = Repo.samples.appendingPathComponent("mqtt-will-abrupt.pcap").path
        let json = try dissect(["--format", "json", sample]).stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let will = try #require(json.first { $0["analysis"] as? String == "will_published" })
        #expect(will["client_id"] as? String == "dev-7" && will["topic"] as? String == "clients/dev-7/status")
        // Its frame is the broker's PUBLISH of the will to the watcher.
        let publish = try #require(json.first { ($0["mqtt"] as? [String: Any])?["topic"] as? String == "clients/dev-7/status" })
        #expect(will["frames"] as? [Int] == [publish["frame"] as! Int])
        #expect(try dissect(["--color", "never", sample]).stdout.contains("MQTT analysis: will published: The will of dev-7"))
        #expect(try dissect(["--format", "table", sample]).stdout.contains("mqtt will_published"))
    }

    @Test("a PUBLISH delivered to every subscription is let go at once: a slow delivery is matched after more PUBLISHes than the window holds")
    func deliveredPublishesLeaveTheWindow() throws {
        // A subscriber to "slow" and "fast"; a publisher. One PUBLISH to "fast" before the
        // SUBSCRIBE (no subscriber: expected nowhere), then one to "slow", then 17,000 to "fast"
        // each delivered at once, then the delivery of "slow". The broker model keeps at most
        // 16,384 PUBLISHes awaiting deliveries: had the delivered ones stayed, "slow" would have
        // been made final before its delivery came, undelivered.
        var two = TwoConnections(firstPort: 41_000)
        for isSub in [true, false] {
            two.on(isSub) { c in
                c.handshake()
                c.send(toServer: true, MQTTBytes.connect(clientID: isSub ? "watcher" : "sender"))
                c.send(toServer: false, MQTTBytes.connack)
            }
        }
        two.on(false) { $0.send(toServer: true, MQTTBytes.publish(topic: "fast", payload: [9])) }
        let filters = [0, 1] + MQTTBytes.string("slow") + [0] + MQTTBytes.string("fast") + [0]
        two.on(true) { c in
            c.send(toServer: true, [0x82] + MQTTBytes.remainingLength(filters.count) + filters)
            c.send(toServer: false, [0x90, 4, 0, 1, 0, 0])
        }
        two.on(false) { $0.send(toServer: true, MQTTBytes.publish(topic: "slow", payload: [1, 2, 3, 4, 5])) }
        for _ in 0..<17_000 {
            two.on(false) { $0.send(toServer: true, MQTTBytes.publish(topic: "fast", payload: [7, 7, 7])) }
            two.on(true) { $0.send(toServer: false, MQTTBytes.publish(topic: "fast", payload: [7, 7, 7])) }
        }
        two.on(true) { $0.send(toServer: false, MQTTBytes.publish(topic: "slow", payload: [1, 2, 3, 4, 5])) }
        two.on(true) { $0.close() }
        two.on(false) { $0.close() }
        // 50 µs apart: 34,000 packets in under 2 s, well within the 10 s window.
        let records = try two.jsonLines(spacing: 50).filter { $0["analysis"] != nil }
        #expect(!records.contains { $0["analysis"] as? String == "undelivered" })
        let byTopic = Dictionary(records.filter { $0["analysis"] as? String == "topic_delivery" }.map { ($0["topic"] as? String ?? "", $0) },
                                 uniquingKeysWith: { a, _ in a })
        let slow = try #require(byTopic["slow"]), fast = try #require(byTopic["fast"])
        #expect(slow["publishes"] as? Int == 1 && slow["deliveries"] as? Int == 1 && slow["undelivered"] == nil)
        #expect(fast["publishes"] as? Int == 17_001 && fast["deliveries"] as? Int == 17_000 && fast["undelivered"] == nil)
    }

    @Test("a will the broker publishes before the capture shows its connection's end is linked once that connection ends")
    func willBeforeTheEnd() throws {
        // dev-9 connects with a will ("gone" to status/dev-9) and falls silent; the broker closes
        // its side and publishes the will to a watcher at once, before the client's side ends (a
        // reset, later). A PUBLISH of another length to the topic before it is not the will.
        var two = TwoConnections(firstPort: 41_100)
        two.on(false) { c in
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "watcher"))
            c.send(toServer: false, MQTTBytes.connack)
            let filter = [0, 1] + MQTTBytes.string("status/#") + [0]
            c.send(toServer: true, [0x82] + MQTTBytes.remainingLength(filter.count) + filter)
            c.send(toServer: false, [0x90, 3, 0, 1, 0])
        }
        two.on(true) { c in
            c.handshake()
            let body = MQTTBytes.string("MQTT") + [4, 0x06, 0, 2] + MQTTBytes.string("dev-9") + MQTTBytes.string("status/dev-9")
                + MQTTBytes.string("gone")
            c.send(toServer: true, [0x10] + MQTTBytes.remainingLength(body.count) + body)
            c.send(toServer: false, MQTTBytes.connack)
        }
        two.on(false) { $0.send(toServer: false, MQTTBytes.publish(topic: "status/dev-9", payload: Array("online".utf8))) }
        // dev-9's own PUBLISH of the will's length to its will topic, delivered: a delivery, not the will.
        two.on(true) { $0.send(toServer: true, MQTTBytes.publish(topic: "status/dev-9", payload: Array("idle".utf8))) }
        two.on(false) { $0.send(toServer: false, MQTTBytes.publish(topic: "status/dev-9", payload: Array("idle".utf8))) }
        two.on(true) { $0.packet(toServer: false, flags: 0x11, payload: []) }
        two.on(false) { $0.send(toServer: false, MQTTBytes.publish(topic: "status/dev-9", payload: Array("gone".utf8))) }
        two.on(true) { $0.packet(toServer: true, flags: 0x04, payload: []) }
        let lines = try two.jsonLines()
        let gone = try #require(lines.first { ($0["mqtt"] as? [String: Any])?["payload"] as? String == "gone" })
        let will = try #require(lines.first { $0["analysis"] as? String == "will_published" })
        #expect(will["client_id"] as? String == "dev-9" && will["frames"] as? [Int] == [gone["frame"] as! Int])
        #expect((will["message"] as? String)?.contains("before the capture shows the connection's end") == true)
    }

    @Test("5.0 Retain As Published: a live PUBLISH forwarded with RETAIN set is a delivery; without it, RETAIN marks the stored message",
          arguments: [true, false])
    func retainAsPublished(asked: Bool) throws {
        // A 5.0 subscriber to "r" (Retain As Published or not); a 5.0 publisher sends a retained
        // PUBLISH; the broker forwards it with RETAIN set (as it must under Retain As Published).
        var two = TwoConnections(firstPort: 41_200)
        let connack5: [UInt8] = [0x20, 3, 0, 0, 0]
        two.on(true) { c in
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "sub5", level: 5))
            c.send(toServer: false, connack5)
            let body = [0, 1, 0] + MQTTBytes.string("r") + [asked ? 0x08 : 0x00]
            c.send(toServer: true, [0x82] + MQTTBytes.remainingLength(body.count) + body)
            c.send(toServer: false, [0x90, 4, 0, 1, 0, 0])
        }
        var retained = MQTTBytes.publish5(topic: "r", properties: [], payload: Array("x1".utf8))
        retained[0] |= 0x01
        two.on(false) { c in
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "pub5", level: 5))
            c.send(toServer: false, connack5)
            c.send(toServer: true, retained)
        }
        two.on(true) { $0.send(toServer: false, retained) }
        let records = try two.jsonLines().filter { $0["analysis"] != nil }
        let topic = try #require(records.first { $0["analysis"] as? String == "topic_delivery" && $0["topic"] as? String == "r" })
        #expect(topic["deliveries"] as? Int == (asked ? 1 : 0))
        #expect(records.contains { $0["analysis"] as? String == "undelivered" } == !asked)
    }

    @Test("a filter the SUBACK refuses is no subscription: a PUBLISH to it is not one that no subscriber received")
    func refusedSubscription() throws {
        var two = TwoConnections(firstPort: 41_300)
        two.on(true) { c in
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "asker"))
            c.send(toServer: false, MQTTBytes.connack)
            let filters = [0, 9] + MQTTBytes.string("open") + [0] + MQTTBytes.string("secret") + [0]
            c.send(toServer: true, [0x82] + MQTTBytes.remainingLength(filters.count) + filters)
            c.send(toServer: false, [0x90, 4, 0, 9, 0x00, 0x80])
        }
        two.on(false) { c in
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "teller"))
            c.send(toServer: false, MQTTBytes.connack)
            c.send(toServer: true, MQTTBytes.publish(topic: "open", payload: [1]))
            c.send(toServer: true, MQTTBytes.publish(topic: "secret", payload: [2]))
        }
        two.on(true) { $0.send(toServer: false, MQTTBytes.publish(topic: "open", payload: [1])) }
        let records = try two.jsonLines().filter { $0["analysis"] != nil }
        #expect(!records.contains { $0["analysis"] as? String == "undelivered" })
        #expect(records.contains { $0["analysis"] as? String == "topic_delivery" && $0["topic"] as? String == "open" && $0["deliveries"] as? Int == 1 })
    }

    @Test("a connection still open when the capture ends, gone idle or let go at the limit does not fire its will",
          arguments: [("end of capture", false), ("idle timeout", false), ("connection limit reached", false),
                      ("client reset it without DISCONNECT", true), ("reset (RST) without DISCONNECT", true),
                      ("broker reset it: keep-alive expired", true), ("broker closed it: no cause in the capture", true),
                      ("broker closed it: the CONNECT was refused (0x05 not authorized)", false), ("client DISCONNECT #12", false)])
    func willFiring(ending: String, fires: Bool) {
        #expect(MQTTBroker.firesWill(ending) == fires)
    }

    @Test("--two-pass: each PUBLISH names what its acknowledgements name it as, with the same times; the lines are otherwise those of one pass",
          arguments: ["1", "2"])
    func twoPass(threads: String) throws {
        let one = try Self.lines(["--threads", threads]), two = try Self.lines(["--two-pass", "--threads", threads])
        #expect(one.count == two.count)
        func flow(_ line: [String: Any]) -> [String: Any]? { (line["mqtt"] as? [String: Any])?["flow"] as? [String: Any] }
        // Each PUBLISH of the second pass by stream, frame and packet identifier.
        var publishes: [String: [String: Any]] = [:]
        for line in two {
            guard let f = flow(line), f["state"] as? String == "sent" else { continue }
            publishes["\(line["stream"]!) \(line["frame"]!) \(f["packet_id"]!)"] = f
        }
        var checked = 0
        for line in one {
            guard let f = flow(line), let state = f["state"] as? String, let publish = f["publish_frame"] as? Int,
                  ["acknowledged", "received", "completed", "refused"].contains(state) else { continue }
            let p = try #require(publishes["\(line["stream"]!) \(publish) \(f["packet_id"]!)"], "no PUBLISH #\(publish) for \(line["frame"]!)")
            let frameKey = (line["mqtt"] as? [String: Any])?["type"] as? String == "PUBCOMP" ? "complete_frame" : "ack_frame"
            let latencyKey = frameKey == "complete_frame" ? "complete_latency_us" : "latency_us"
            #expect(p[frameKey] as? Int == line["frame"] as? Int)
            #expect(p[latencyKey] as? Int == f["latency_us"] as? Int)
            if state == "refused" { #expect(p["refused"] as? Bool == true) }
            checked += 1
        }
        #expect(checked >= 15)
        // What a connection left open: the records of one pass, the PUBLISHes of the other.
        let open = one.filter { ["unacknowledged", "incomplete_flow"].contains($0["analysis"] as? String ?? "") }
        let neverSent = two.compactMap { flow($0)?["never_sent"] }
        #expect(!open.isEmpty && neverSent.count == open.count)
        // The deliveries the broker model matched, on the PUBLISHes that made them: as many as
        // its topic records count, all on client PUBLISHes.
        let delivered = two.compactMap { line -> Int? in
            guard let d = (line["mqtt"] as? [String: Any])?["delivered"] as? [String: Any] else { return nil }
            #expect((line["dst"] as? String)?.hasSuffix(":1883") == true && (d["first_latency_us"] as? Int ?? -1) >= 0)
            return d["connections"] as? Int
        }
        let perTopic = one.filter { $0["analysis"] as? String == "topic_delivery" }.compactMap { $0["deliveries"] as? Int }
        #expect(delivered.count >= 5 && delivered.reduce(0, +) == perTopic.reduce(0, +))
        // Without the keys the first pass adds, the lines are the same.
        for (a, b) in zip(one, two) {
            #expect(NSDictionary(dictionary: a).isEqual(to: Self.onePassLine(b)), "\(a["frame"] ?? "") differs")
        }
    }

    /// A JSON line of a run in two passes without what the first pass adds.
    static func onePassLine(_ line: [String: Any]) -> [String: Any] {
        if var a = line["amqp"] as? [String: Any] {
            // A publish's route and confirm, a delivery's acknowledgement.
            switch a["method"] as? String {
            case "basic.publish": a["routing"] = nil; a["confirm"] = nil
            case "basic.deliver", "basic.get-ok": a["ack"] = nil
            default: break
            }
            var line = line
            line["amqp"] = a
            return line
        }
        guard var m = line["mqtt"] as? [String: Any] else { return line }
        var line = line
        m["delivered"] = nil
        if var f = m["flow"] as? [String: Any], f["state"] as? String == "sent" {
            let acknowledged = f["ack_frame"] != nil
            for k in ["ack_frame", "complete_frame", "complete_latency_us", "refused", "never_sent"] { f[k] = nil }
            if acknowledged { f["latency_us"] = nil }
            m["flow"] = f
        }
        line["mqtt"] = m
        return line
    }

    @Test("--two-pass on every sample and Suricata capture: the lines of one pass, the first pass's keys aside; same status and warnings",
          arguments: Repo.sampleCaptures().map { Repo.samples.appendingPathComponent($0).path } + Repo.suricataCaptures())
    func twoPassEverywhere(capture: String) throws {
        let args = GoldenTests.arguments(for: (capture as NSString).lastPathComponent)
        let one = try dissect(["--format", "json"] + args + [capture]), two = try dissect(["--format", "json", "--two-pass"] + args + [capture])
        #expect(one.status == two.status && one.stderr == two.stderr)
        func lines(_ text: String) -> [[String: Any]] {
            text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        let a = lines(one.stdout), b = lines(two.stdout).map(Self.onePassLine)
        #expect(a.count == b.count)
        // Compared as JSON with sorted keys: on Linux, NSDictionary's isEqual tells a JSON `true`
        // read into `[String: Any]` from the same value bridged again.
        func text(_ line: [String: Any]) -> String {
            String(decoding: (try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        }
        for (x, y) in zip(a, b) { #expect(!text(x).isEmpty && text(x) == text(y), "\(x["frame"] ?? "") differs") }
    }

    @Test("--two-pass takes files only (not standard input or a pipe), needs the analysis, and leaves a table as it is")
    func twoPassNeedsFiles() throws {
        #expect(try dissect(["--two-pass", "-"]).status == 2)
        #expect(try dissect(["--two-pass", "--no-analysis", Self.sample]).status == 2)
        let fifo = NSTemporaryDirectory() + "two-pass-\(UInt64.random(in: 0...UInt64.max))"
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: fifo) }
        let piped = try dissect(["--two-pass", fifo])
        #expect(piped.status == 2 && piped.stderr.contains("pipes"))
        #expect(try dissect(["--two-pass", "--format", "table", Self.sample]).stdout == dissect(["--format", "table", Self.sample]).stdout)
    }

    @Test("--no-analysis: no flow objects, no records, no flow sums; the PDUs are the same")
    func off() throws {
        let on = try Self.lines([]), off = try Self.lines(["--no-analysis"])
        #expect(off.allSatisfy { $0["analysis"] == nil && $0["flows"] == nil && ($0["mqtt"] as? [String: Any])?["flow"] == nil })
        #expect(on.filter { $0["mqtt"] != nil }.map { $0["summary"] as! String } == off.filter { $0["mqtt"] != nil }.map { $0["summary"] as! String })
        let text = try dissect(["--no-analysis", Self.sample])
        #expect(!text.stdout.contains("analysis") && !text.stdout.contains(" [acknowledges"))
        let table = try dissect(["--format", "table", "--no-analysis", Self.sample])
        #expect(!table.stdout.contains("Message flows") && !table.stdout.contains("\nAnalysis\n"))
    }

    @Test("text: annotations on the PDUs and the analysis section; table: flows per connection and the findings")
    func textAndTable() throws {
        let text = try dissect(["--color", "never", Self.sample]).stdout
        #expect(text.contains("[retransmission of #"))
        #expect(text.contains("[refuses #") && text.contains("0x87 Not authorized]"))
        #expect(text.contains("MQTT analysis: incomplete flow: QoS 2 PUBLISH #"))
        #expect(text.contains("message flows (QoS 1 and 2): 12 completed, 5 not"))
        let table = try dissect(["--format", "table", Self.sample]).stdout
        #expect(table.contains("Message flows (QoS 1 and 2)"))
        #expect(table.contains("     1      0     1         -         -         -\n       reset (RST) without DISCONNECT"))
        #expect(table.contains("    17      0     0         -         -         -\n       broker closed it: keep-alive expired"))
        #expect(table.contains("flows/fan/q1                     1     3     3.0"))
        #expect(table.contains("flows-backoff                4 1"))
        #expect(table.contains("     3 mqtt unexpected_ack"))
    }
}

/// Two MQTT connections in one capture (client ports `firstPort` and the next), their packets
/// in the order the steps make them (`on`): the scenarios of the broker model's tests.
struct TwoConnections {
    var first: SyntheticCapture
    var second: SyntheticCapture
    /// Each packet: whether it is the first connection's, and its place in that connection's records.
    private var order: [(first: Bool, index: Int)] = []

    init(firstPort: UInt16) {
        first = SyntheticCapture(clientPort: firstPort)
        second = SyntheticCapture(clientPort: firstPort + 1)
    }

    /// Adds the packets `step` makes to the first connection (or the second).
    mutating func on(_ isFirst: Bool, _ step: (inout SyntheticCapture) -> Void) {
        let before = isFirst ? first.records.count : second.records.count
        if isFirst { step(&first) } else { step(&second) }
        for i in before..<(isFirst ? first.records.count : second.records.count) { order.append((isFirst, i)) }
    }

    /// The capture (packets `spacing` µs apart) dissected as JSON, its lines parsed.
    func jsonLines(spacing: Int = 1000) throws -> [[String: Any]] {
        var capture = first
        capture.replaceRecords(order.map { $0.first ? first.records[$0.index] : second.records[$0.index] }, spacing: spacing)
        let path = try capture.write(name: "two-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try dissect(["--format", "json", path])
        #expect(result.status == 0)
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
