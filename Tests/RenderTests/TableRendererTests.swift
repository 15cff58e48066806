import Foundation
import Dissection
@testable import Render
import Testing
import TestSupport

// PDUs as decoders shape them, built by hand: only the keys the table reads, at the places the
// AMQP and MQTT decoders put them (derived keys at the root, close details under `arguments`).

private func context(_ stream: Int, _ frame: Int) -> StreamContext {
    StreamContext(frame: frame, time: Timestamp(seconds: 1_700_000_000 + Int64(frame), nanoseconds: 0), stream: stream,
                  source: "127.0.0.1:\(40_000 + stream)", destination: "127.0.0.1:5672")
}

private func amqpMethod(_ method: String, channel: Int = 1, arguments: [Field] = [], root: [Field] = []) -> DissectedPDU {
    var fields = [Field("frame_type", "Type", .string("method")), Field("channel", "Channel", .int(channel)),
                  Field("method", "Method", .string(method))]
    if !arguments.isEmpty { fields.append(Field("arguments", "Arguments", children: arguments)) }
    return DissectedPDU(protocolName: "amqp", summary: method, fields: fields + root, wireLength: 20)
}

/// A body frame that completes a message, with the `message` object the AMQP decoder adds.
private func amqpBody(_ method: String, exchange: String, routingKey: String, bodySize: Int, channel: Int = 1) -> DissectedPDU {
    let message = Field("message", "Message", children: [
        Field("method", "Method", .string(method)), Field("exchange", "Exchange", .string(exchange)),
        Field("routing_key", "Routing-Key", .string(routingKey)), Field("body_size", "Body size", .int(bodySize)),
    ])
    return DissectedPDU(protocolName: "amqp", summary: "body", fields: [
        Field("frame_type", "Type", .string("body")), Field("channel", "Channel", .int(channel)), message,
    ], wireLength: bodySize + 8)
}

private func amqpFrame(_ type: String, channel: Int = 1) -> DissectedPDU {
    DissectedPDU(protocolName: "amqp", summary: type,
                 fields: [Field("frame_type", "Type", .string(type)), Field("channel", "Channel", .int(channel))], wireLength: 8)
}

private func queueField(_ name: String) -> Field { Field("queue", "Queue (from basic.consume)", .string(name)) }

private func amqpClose(_ method: String, code: Int, name: String?, text: String, failed: String?) -> DissectedPDU {
    let codeField = Field("reply_code", "Reply-Code", .int(code))
    var methodID = Field("method_id", "Method-Id", .int(failed == nil ? 0 : 10))
    if let failed { methodID.children = [Field("failed_method", "Failed method", .string(failed))] }
    // The code's name is the frame's `reason`, as the AMQP decoder puts it.
    return amqpMethod(method, channel: method == "connection.close" ? 0 : 1,
                      arguments: [codeField, Field("reply_text", "Reply-Text", .string(text)), methodID],
                      root: name.map { [Field("reason", "Reason", .string($0), jsonOnly: true)] } ?? [])
}

private func mqtt(_ type: String, _ fields: [Field] = []) -> DissectedPDU {
    DissectedPDU(protocolName: "mqtt", summary: type, fields: [Field("type", "Message Type", .string(type))] + fields, wireLength: 10)
}

private func mqttPublish(topic: String, length: Int, qos: Int) -> DissectedPDU {
    DissectedPDU(protocolName: "mqtt", summary: "PUBLISH", fields: [
        Field("type", "Message Type", .string("PUBLISH"), children: [Field("qos", "QoS Level", .int(qos)),
                                                                    Field("retain", "Retain", .bool(false))]),
        Field("topic", "Topic", .string(topic)), Field("payload_length", "Payload length", .int(length)),
    ], wireLength: length + 10)
}

/// Renders the events as the table format does, in order, then the summaries.
private func table(_ events: [OutputEvent]) -> String {
    var renderer = TableRenderer(options: RenderOptions())
    var out = ""
    for event in events { renderer.render(event, into: &out) }
    renderer.finish(into: &out)
    return out
}

/// The rows of a section (after its title and column header, up to the blank line), each split
/// into its words; nil when the section is not printed.
private func rows(_ output: String, _ title: String) -> [[String]]? {
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: title) else { return nil }
    return lines[(start + 2)...].prefix { !$0.isEmpty }.map { $0.split(separator: " ").map(String.init) }
}

/// The AMQP connection of the real pika session in the AMQP tests, reduced to the keys read.
private func amqpSession(stream: Int = 0) -> [OutputEvent] {
    let c = context(stream, 1)
    return [
        .pdu(c, .toServer, DissectedPDU(protocolName: "amqp", summary: "protocol header AMQP 0-9-1", fields: [
            Field("frame_type", "Type", .string("protocol_header")), Field("version", "Version", .string("0-9-1")),
        ], wireLength: 8)),
        .pdu(c, .toServer, amqpMethod("connection.start-ok", channel: 0,
                                      arguments: [Field("client_properties", "Client-Properties", children: [
                                          Field("version", "version", .string("1.3.2")),
                                      ])],
                                      root: [Field("sasl_user", "SASL user", .string("guest")),
                                             Field("client_product", "Client product", .string("Pika Python Client Library"), jsonOnly: true),
                                             Field("client_version", "Client version", .string("1.3.2"), jsonOnly: true),
                                             Field("client_platform", "Client platform", .string("Python 3.11.7"), jsonOnly: true)])),
        .pdu(c, .toServer, amqpMethod("connection.open", channel: 0, arguments: [Field("virtual_host", "Virtual-Host", .string("/"))],
                                      root: [Field("vhost", "Virtual host", .string("/"), jsonOnly: true)])),
        .pdu(c, .toServer, amqpMethod("channel.open")),
        .pdu(c, .toServer, amqpMethod("basic.publish", arguments: [Field("exchange", "Exchange", .string("")),
                                                                   Field("routing_key", "Routing-Key", .string("orders"))])),
        .pdu(c, .toServer, amqpFrame("header")),
        .pdu(c, .toServer, amqpBody("basic.publish", exchange: "", routingKey: "orders", bodySize: 6000)),
        .pdu(c, .toServer, amqpFrame("heartbeat", channel: 0)),
    ]
}

@Suite("Table renderer")
struct TableRendererTests {
    @Test("completed publishes are summed per exchange and routing key; the default exchange prints as (default)")
    func exchanges() {
        var events = amqpSession()
        let c = context(0, 2)
        events += [
            .pdu(c, .toServer, amqpBody("basic.publish", exchange: "", routingKey: "orders", bodySize: 0)),
            .pdu(c, .toServer, amqpBody("basic.publish", exchange: "pd.topic", routingKey: "sensors.kitchen.temp", bodySize: 20)),
            .pdu(c, .toServer, amqpBody("basic.publish", exchange: "pd.fanout", routingKey: "", bodySize: 7)),
            // A message the broker delivers is not a publish.
            .pdu(c, .toClient, amqpBody("basic.deliver", exchange: "pd.topic", routingKey: "sensors.kitchen.temp", bodySize: 20)),
        ]
        let out = table(events)
        #expect(rows(out, "Exchanges") == [
            ["(default)", "orders", "2", "6000", "B"],
            ["pd.fanout", "(empty)", "1", "7", "B"],
            ["pd.topic", "sensors.kitchen.temp", "1", "20", "B"],
        ])
        #expect(rows(out, "Topics") == nil, "basic.publish is not an MQTT topic")
    }

    @Test("a consumer's row: its queue, or that its basic.consume came before the capture")
    func consumers() {
        func consumer(_ tag: String, queue: String?) -> OutputEvent {
            var fields = [Field("consumer_tag", "Consumer tag", .string(tag))]
            if let queue { fields.append(Field("queue", "Queue", .string(queue))) } else {
                fields.append(Field("before_capture", "Consumed before the capture", .bool(true)))
            }
            fields += [Field("deliveries", "Deliveries", .int(3)), Field("acknowledged", "Acknowledged", .int(2)),
                       Field("rejected", "Rejected or nacked", .int(1))]
            return .analysis(AnalysisRecord(protocolName: "amqp", kind: .consumer, frames: [1], message: "consumer", fields: fields))
        }
        let out = table(amqpSession() + [consumer("c1", queue: "work"), consumer("c2", queue: nil)])
        #expect(rows(out, "Consumers")?.map { Array($0.prefix(4)) } == [["c1", "work", "3", "2"], ["c2", "(before", "the", "capture)"]])
    }

    @Test("deliveries, acks, nacks and rejects are counted per queue; a multiple ack counts the deliveries it covers")
    func queues() {
        let c = context(0, 3)
        let events: [OutputEvent] = amqpSession() + [
            .pdu(c, .toClient, amqpMethod("basic.deliver", root: [queueField("orders")])),
            .pdu(c, .toClient, amqpMethod("basic.deliver", root: [queueField("orders")])),
            .pdu(c, .toClient, amqpMethod("basic.get-ok", root: [Field("queue", "Queue (from basic.get)", .string("orders"))])),
            .pdu(c, .toClient, amqpMethod("basic.deliver", root: [queueField("audit")])),
            .pdu(c, .toServer, amqpMethod("basic.ack", root: [queueField("orders"), Field("acked_count", "Covered", .int(2))])),
            .pdu(c, .toServer, amqpMethod("basic.reject", root: [queueField("orders")])),
            .pdu(c, .toServer, amqpMethod("basic.nack", root: [queueField("audit")])),
            // Not attributed by the decoder (a broker's publisher confirm): not counted.
            .pdu(c, .toClient, amqpMethod("basic.ack")),
            // A basic.get names its queue in an argument, which is not a delivery.
            .pdu(c, .toServer, amqpMethod("basic.get", arguments: [Field("queue", "Queue", .string("orders"))])),
        ]
        #expect(rows(table(events), "Queues") == [
            ["audit", "1", "0", "1", "0"],
            ["orders", "3", "2", "0", "1"],
        ])
    }

    @Test("closes show the stream, who closed, the reply code with its name, the text without the repeated name, the failed method")
    func closes() {
        let events: [OutputEvent] = amqpSession(stream: 0) + amqpSession(stream: 1) + [
            .pdu(context(1, 5), .toClient, amqpClose("channel.close", code: 406, name: "PRECONDITION_FAILED",
                                                     text: "PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'orders'",
                                                     failed: "queue.declare")),
            .pdu(context(0, 6), .toClient, amqpClose("connection.close", code: 403, name: "ACCESS_REFUSED",
                                                     text: "ACCESS_REFUSED - Login was refused", failed: nil)),
            .pdu(context(1, 7), .toServer, amqpClose("connection.close", code: 200, name: "REPLY_SUCCESS",
                                                     text: "Normal shutdown", failed: nil)),
            .pdu(context(1, 8), .toClient, amqpMethod("connection.close-ok", channel: 0)),
        ]
        #expect(rows(table(events), "Closes") == [
            ["0", "server", "connection.close", "403", "ACCESS_REFUSED", "-"],
            ["Login", "was", "refused"],
            ["1", "server", "channel.close", "406", "PRECONDITION_FAILED", "queue.declare"],
            ["inequivalent", "arg", "'durable'", "for", "queue", "'orders'"],
            ["1", "client", "connection.close", "200", "REPLY_SUCCESS", "-"],
            ["Normal", "shutdown"],
        ])
    }

    @Test("an AMQP connection row shows user@vhost, the protocol version, the client, and frames by root type")
    func amqpConnection() throws {
        let out = table(amqpSession())
        let connection = try #require(rows(out, "Connections"))
        #expect(connection[0].prefix(4) == ["0", "127.0.0.1:40000", "guest@/", "0-9-1"])
        #expect(out.contains("       client Pika Python Client Library 1.3.2 (Python 3.11.7), user guest,\n       vhost /, channels 1\n"))
        // The body frame's message says basic.publish, but the frame is a body frame.
        #expect(out.contains("basic.publish 1, header 1, body 1, heartbeat 1"))
    }

    @Test("an MQTT-only input prints its connections and topics and no AMQP section")
    func mqttOnly() throws {
        let c = context(0, 1)
        let out = table([
            .pdu(c, .toServer, mqtt("CONNECT", [Field("client_id", "Client ID", .string("sensor-1")),
                                                Field("version", "Version Name", .string("3.1.1"), jsonOnly: true)])),
            .pdu(c, .toClient, mqtt("CONNACK")),
            .pdu(c, .toServer, mqttPublish(topic: "home/temp", length: 4, qos: 1)),
            .pdu(c, .toServer, mqttPublish(topic: "home/temp", length: 5, qos: 0)),
        ])
        for title in ["Exchanges", "Queues", "Closes"] {
            #expect(rows(out, title) == nil, "\(title) printed for MQTT")
        }
        #expect(rows(out, "Topics") == [["home/temp", "2", "9", "B", "1/1/0", "0"]])
        let connection = try #require(rows(out, "Connections"))
        #expect(connection[0].prefix(4) == ["0", "127.0.0.1:40000", "sensor-1", "3.1.1"])
        #expect(connection[1] == ["CONNECT", "1,", "CONNACK", "1,", "PUBLISH", "2"])
    }

    @Test("PUBLISHes to hundreds of topics, some differing in one byte, are counted per topic")
    func manyTopics() throws {
        var events: [OutputEvent] = []
        var expected: [String: Int] = [:]
        var rng = SplitMix64(seed: 0x70C5)
        for frame in 1...4000 {
            let n = Int(rng.next() % 300)
            // Names of every length up to 40 bytes; pairs that differ only in their last byte.
            let topic = "t/" + String(repeating: "x", count: n % 38) + String(UnicodeScalar(UInt8(65 + n % 26)))
            events.append(.pdu(context(0, frame), .toServer, mqttPublish(topic: topic, length: 1, qos: 0)))
            expected[topic, default: 0] += 1
        }
        let out = table(events)
        let topics = try #require(rows(out, "Topics"))
        var counted: [String: Int] = [:]
        for row in topics { if let n = Int(row[1]) { counted[row[0]] = n } }
        #expect(counted == expected)
    }

    @Test("PDUs of connections that interleave, close and open are each counted on their own connection's row")
    func interleavedConnections() throws {
        var events: [OutputEvent] = []
        var expected: [Int: Int] = [:]
        var rng = SplitMix64(seed: 0x7AB1)
        var open = [0, 1, 2]
        var next = 3
        for frame in 1...3000 {
            let stream = open[Int(rng.next() % UInt64(open.count))]
            events.append(.pdu(context(stream, frame), .toServer, mqtt(["PUBACK", "PUBREC", "PINGREQ"][frame % 3])))
            expected[stream, default: 0] += 1
            if rng.next() % 50 == 0 {
                // A connection ends (its summary replaces its row) and another starts.
                let gone = open.remove(at: Int(rng.next() % UInt64(open.count)))
                expected[gone, default: 0] += 0 // a row, with no PDUs if none came
                events.append(.connectionClosed(ConnectionSummary(
                    stream: gone, client: "127.0.0.1:\(40_000 + gone)", server: "127.0.0.1:1883", protocolName: "mqtt",
                    firstSeen: Timestamp(seconds: 0, nanoseconds: 0), lastSeen: Timestamp(seconds: 1, nanoseconds: 0),
                    bytesToServer: 1, bytesToClient: 1, closeReason: "closed (FIN both ways)")))
                open.append(next)
                next += 1
            }
        }
        let out = table(events)
        let connections = try #require(rows(out, "Connections"))
        var counted: [Int: Int] = [:]
        for row in connections where row.count >= 6 { if let stream = Int(row[0]), let pdus = Int(row[5]) { counted[stream] = pdus } }
        #expect(counted == expected)
        #expect(expected.count > 20)
    }

    @Test("a kind is counted under one name however its string was made: literal, interpolated, or long and separately allocated")
    func kindsMergeByValue() throws {
        let c = context(0, 1)
        let prefix = "connection"
        let long = "connection.start-ok-but-longer-than-small"
        let built = String(long.utf8.map { Character(UnicodeScalar($0)) })
        let out = table([
            .pdu(c, .toServer, amqpMethod("connection.start-ok", channel: 0)),
            .pdu(c, .toServer, amqpMethod("\(prefix).start-ok", channel: 0)),
            .pdu(c, .toServer, amqpMethod(long, channel: 0)),
            .pdu(c, .toServer, amqpMethod(built, channel: 0)),
            .pdu(c, .toServer, amqpMethod(String(long.reversed().reversed()), channel: 0)),
            .pdu(c, .toServer, amqpMethod("\(prefix).start-ok", channel: 0)),
        ])
        #expect(out.contains("connection.start-ok 3,"))
        #expect(out.contains("connection.start-ok-but-longer-than-small 3\n"))
    }

    @Test("every line fits 80 columns, however long the names and texts")
    func fitsEightyColumns() {
        let long = String(repeating: "very-long-name.", count: 12)
        let c = context(12_345, 1)
        var events = amqpSession(stream: 12_345)
        events += [
            .pdu(c, .toServer, amqpMethod("connection.start-ok", channel: 0,
                                          root: [Field("sasl_user", "SASL user", .string(long)),
                                                 Field("client_product", "Client product", .string(long)),
                                                 Field("client_version", "Client version", .string(long))])),
            .pdu(c, .toServer, amqpBody("basic.publish", exchange: long, routingKey: long, bodySize: 3_000_000_000)),
            .pdu(c, .toClient, amqpMethod("basic.deliver", root: [queueField(long)])),
            .pdu(c, .toClient, amqpClose("channel.close", code: 406, name: "PRECONDITION_FAILED",
                                         text: "PRECONDITION_FAILED - " + long + long, failed: "exchange.declare-ok.unknown-method")),
            .pdu(c, .toServer, mqttPublish(topic: long, length: 12, qos: 2)),
        ]
        let out = table(events)
        for title in ["Connections", "Topics", "Exchanges", "Queues", "Closes"] {
            #expect(rows(out, title)?.isEmpty == false, "\(title) missing")
        }
        for line in out.split(separator: "\n") {
            #expect(line.count <= 80, "\(line.count) columns: \(line)")
        }
    }
}

@Suite("Table byte counts")
struct TableByteCountTests {
    @Test("byte counts fit the 8-column byte fields at every unit boundary",
          arguments: [(0, "0 B"), (9_999, "9999 B"), (10_000, "10.0 kB"), (999_949, "999.9 kB"), (999_950, "1.0 MB"),
                      (1_500_000, "1.5 MB"), (9_999_999, "10.0 MB"), (999_949_999, "999.9 MB"), (999_950_000, "1.0 GB"),
                      (3_000_000_000_000, "3.0 TB")])
    func sizes(bytes: Int, expected: String) {
        #expect(size(bytes) == expected)
        #expect(size(bytes).count <= 8)
    }
}

/// A connection's kinds are found through a small cache keyed by the kind String's bits: the
/// counts and the first-seen order must be those of a plain search, whether each kind comes as
/// the very string counted before, as an equal string made anew, or as one colliding in the cache.
@Suite("Table kind counts")
struct TableKindCountsTests {
    @Test("forty kinds, each the same string or an equal one made anew, interleaved: the counts and order of a plain search")
    func countsAndOrder() {
        var rng = SplitMix64(seed: 0x51A7)
        // Longer than a small string: their bits name their storage, not their bytes.
        let names = (0..<40).map { "kind-number-\($0)-of-the-connection" }
        var counts = TableRenderer.KindCounts()
        var expected: [(String, Int)] = []
        for step in 0..<5_000 {
            let k = Int(rng.next() % UInt64(step < 200 ? 10 : 40))
            // Half the time an equal string made anew (other bits), else the very same string.
            let kind = rng.next() % 2 == 0 ? names[k] : String(names[k].utf8.map { Character(Unicode.Scalar($0)) })
            let n = Int(rng.next() % 3) + 1
            counts.add(kind, n)
            if let i = expected.firstIndex(where: { $0.0 == kind }) { expected[i].1 += n } else { expected.append((kind, n)) }
        }
        #expect(counts.list.map(\.0) == expected.map(\.0))
        #expect(counts.list.map(\.1) == expected.map(\.1))
        #expect(counts.list.count == 40)
    }
}

/// The table's rows are found through `DigestTable`, an open-addressed index probed by each key's
/// digest: it must find exactly what a dictionary finds, digests colliding or not.
@Suite("Digest table")
struct DigestTableTests {
    /// A key whose digest is chosen, so that keys can collide.
    struct Key: DigestHashed {
        let name: String
        let digest: UInt64
    }

    @Test("3,000 keys, a third of them sharing a few digests, looked up as they are added: a dictionary's answers, rows in insertion order")
    func sameAsDictionary() {
        var rng = SplitMix64(seed: 0xD16E)
        var table = DigestTable<Key, Int>()
        var reference: [String: Int] = [:]
        var order: [String] = []
        for step in 0..<6_000 {
            let n = Int(rng.next() % 3_000)
            let name = "key-\(n)"
            // Keys below 1,000 share eight digests; the others have their own.
            let fixed = Key(name: name, digest: n < 1_000 ? UInt64(n % 8) : DigestKey(name).digest)
            if let i = table.index(forKey: fixed) {
                table.values[i] += step
            } else {
                #expect(reference[name] == nil)
                table.append(fixed, step)
                order.append(name)
            }
            reference[name, default: 0] += step
        }
        #expect(table.count == reference.count)
        #expect(table.keys.map(\.name) == order)
        for (name, value) in reference {
            let n = Int(name.dropFirst(4))!
            let fixed = Key(name: name, digest: n < 1_000 ? UInt64(n % 8) : DigestKey(name).digest)
            #expect(table[fixed] == value)
        }
        #expect(table[Key(name: "absent", digest: 3)] == nil)
        #expect(table[Key(name: "key-5", digest: 4)] == nil, "the same name under another digest is another key")
    }
}
