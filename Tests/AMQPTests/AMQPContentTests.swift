@testable import AMQP
@testable import AMQPViews
import Dissection
import Render
import Foundation
import Testing

/// A content header with all 14 basic properties (flags 0xFFFC: bits 15..2 set).
private let fullHeaderProperties: [UInt8] =
    Wire.shortstr("text/plain")                                  // content-type
    + Wire.shortstr("gzip")                                      // content-encoding
    + Wire.table([("x-retries", [0x49] + Wire.u32(3))])          // headers
    + [0x02]                                                     // delivery-mode 2 (persistent)
    + [0x05]                                                     // priority 5
    + Wire.shortstr("corr-1")                                    // correlation-id
    + Wire.shortstr("amq.rabbitmq.reply-to")                     // reply-to
    + Wire.shortstr("60000")                                     // expiration
    + Wire.shortstr("msg-1")                                     // message-id
    + Wire.u64(1_700_000_000)                                    // timestamp
    + Wire.shortstr("order.created")                             // type
    + Wire.shortstr("guest")                                     // user-id
    + Wire.shortstr("shop")                                      // app-id
    + Wire.shortstr("")                                          // cluster-id

@Suite("AMQP content")
struct AMQPContentTests {
    @Test("a content header with all 14 basic properties decodes each of them")
    func allProperties() {
        let bytes = Wire.contentHeader(channel: 1, bodySize: 12, flags: 0xFFFC, properties: fullHeaderProperties)
        let pdu = AMQPDecoder.decode(frame: bytes[...])
        #expect(pdu.problems.isEmpty, "\(pdu.problems.map(\.description))")
        #expect(pdu.value("frame_type") == .string("header"))
        #expect(pdu.value("class_id") == .int(60))
        #expect(pdu.value("body_size") == .int(12))
        #expect(pdu.value("property_flags") == .int(0xFFFC))
        let properties = pdu.fields.first { $0.key == "properties" }?.children ?? []
        #expect(properties.map(\.key) == ["content_type", "content_encoding", "headers", "delivery_mode", "priority",
                                          "correlation_id", "reply_to", "expiration", "message_id", "timestamp",
                                          "type", "user_id", "app_id", "cluster_id"])
        #expect(pdu.value("properties.content_type") == .string("text/plain"))
        #expect(pdu.value("properties.headers.x-retries") == .int(3))
        #expect(pdu.value("properties.delivery_mode") == .int(2))
        #expect(pdu.value("properties.timestamp") == .int(1_700_000_000))
        #expect(pdu.value("properties.app_id") == .string("shop"))
        #expect(pdu.summary.hasPrefix("content header basic body-size=12 content-type=text/plain content-encoding=gzip headers=1 delivery-mode=2"))
    }

    @Test("a timestamp's text line shows the number and its UTC time, past year 9999 and past Int.max too",
          arguments: [(UInt64(1_700_000_000), "1700000000 (2023-11-14T22:13:20Z)"),
                      (UInt64(253_402_300_799), "253402300799 (9999-12-31T23:59:59Z)"),
                      (UInt64(253_402_300_800), "253402300800 (beyond year 9999)"),
                      (UInt64.max, "18446744073709551615 (beyond year 9999)")])
    func timestampLines(seconds: UInt64, shown: String) {
        // The timestamp property alone (flag bit 6), then a `headers` table holding one timestamp.
        let property = Wire.contentHeader(channel: 1, bodySize: 0, flags: 0x0040, properties: Wire.u64(seconds))
        let pdu = AMQPDecoder.decode(frame: property[...])
        #expect(pdu.problems.isEmpty, "\(pdu.problems.map(\.description))")
        let timestamp = pdu.fields.first { $0.key == "properties" }?.children.first { $0.key == "timestamp" }
        #expect(timestamp?.line == "Timestamp: \(shown)")
        let headers = Wire.contentHeader(channel: 1, bodySize: 0, flags: 0x2000,
                                         properties: Wire.table([("t", [0x54] + Wire.u64(seconds))]))
        let entry = AMQPDecoder.decode(frame: headers[...]).fields.first { $0.key == "properties" }?
            .children.first { $0.key == "headers" }?.children.first { $0.key == "t" }
        // A table entry's value is an Int: a time past Int.max shows as Int.max, its date as the time's.
        let number = seconds <= UInt64(Int.max) ? String(seconds) : String(Int.max)
        #expect(entry?.line == "t (timestamp): \(number) \(shown.drop { $0 != "(" })")
    }

    /// The JSON object of a PDU's tree, as the JSON format prints it.
    private static func jsonObject(_ pdu: DissectedPDU) -> NSDictionary? {
        var sink = ByteSink()
        JSONTree.writeObject(pdu.fields, showSecrets: false, into: &sink)
        return (try? JSONSerialization.jsonObject(with: Data(sink.bytes))) as? NSDictionary
    }

    @Test("a completed message's properties are its content header's object in JSON, a summary line in text",
          arguments: [PDUDetail.tree, .json, .text])
    func messageProperties(detail: PDUDetail) throws {
        let bytes = Wire.protocolHeader + Wire.method(20, 10, channel: 1, Wire.shortstr(""))
            + Wire.publish(channel: 1, exchange: "x", routingKey: "k")
            + Wire.contentHeader(channel: 1, bodySize: 5, flags: 0xFFFC, properties: fullHeaderProperties)
            + Wire.body(channel: 1, "hello")
        var options = AMQPOptions()
        options.detail = detail
        let pdus = dissect(bytes, options: options)
        try #require(pdus.count == 5)
        if case .text = detail {
            var sink = ByteSink()
            TextTree.write(pdus[4].fields, depth: 1, style: TextTree.Style(), into: &sink)
            let text = String(decoding: sink.bytes, as: UTF8.self)
            #expect(text.contains("\n        Properties: content-type=text/plain content-encoding=gzip headers=1 delivery-mode=2"), "\(text)")
            return
        }
        let header = try #require(Self.jsonObject(pdus[3])), body = try #require(Self.jsonObject(pdus[4]))
        let headerProperties = try #require(header["properties"] as? NSDictionary)
        let message = try #require(body["message"] as? NSDictionary)
        #expect(message["properties"] as? NSDictionary == headerProperties)
        #expect((headerProperties["headers"] as? NSDictionary)?["x-retries"] as? Int == 3)
        if detail == .json {
            // For JSON alone the header frame and the message hold the object written already (a
            // `.json` value): the same bytes as the tree's object written by the JSON writer.
            var tree = AMQPOptions()
            tree.detail = .tree
            let treePDUs = dissect(bytes, options: tree)
            func written(_ pdu: DissectedPDU) -> [UInt8] {
                var sink = ByteSink()
                JSONTree.writeObject(pdu.fields, showSecrets: false, into: &sink)
                return Array(sink.bytes)
            }
            let properties = pdus[4].fields.first { $0.key == "message" }?.children.first { $0.key == "properties" && $0.jsonOnly }
            guard case .json? = properties?.value else {
                Issue.record("the message's properties are not a written JSON value: \(String(describing: properties))")
                return
            }
            #expect(written(pdus[4]) == written(treePDUs[4]))
            // The header frame's object too, written once: the message repeats its bytes.
            #expect(written(pdus[3]) == written(treePDUs[3]))
            let headerObject = pdus[3].fields.first { $0.key == "properties" }
            #expect(headerObject?.value == properties?.value)
        }
        // In the field tree: the summary line for text, the object for JSON, without the header
        // frame's byte ranges (they are not this frame's).
        guard detail == .tree else { return }
        let fields = pdus[4].fields.first { $0.key == "message" }?.children.filter { $0.key == "properties" } ?? []
        try #require(fields.count == 2)
        #expect(fields[0].textOnly && fields[0].value.stringValue?.hasPrefix("content-type=text/plain") == true)
        #expect(fields[1].jsonOnly && fields[1].children.count == 14)
        func ranges(_ f: Field) -> Int { (f.range == nil ? 0 : 1) + f.children.map(ranges).reduce(0, +) }
        #expect(ranges(fields[1]) == 0)
    }

    @Test("a body preview in a summary stays on one line: tabs, CR, LF and CR LF become spaces")
    func bodyPreviewOneLine() {
        #expect(AMQPFrameSummary.summaryPreview(Array("a\r\nb\tc\nd".utf8)[...]) == "\"a  b c d\"")
        #expect(AMQPFrameSummary.summaryPreview(Array("ünï\r\n".utf8)[...]) == "\"ünï  \"")
        #expect(AMQPFrameSummary.summaryPreview(Array(repeating: UInt8(ascii: "x"), count: 50)[...]) == "\"" + String(repeating: "x", count: 40) + "...\"")
        #expect(AMQPFrameSummary.summaryPreview([0x00, 0xFF][...]) == "00ff")
    }

    @Test("the summary shows the common properties")
    func headerSummary() {
        let props = Wire.shortstr("text/plain") + [0x02]
        let bytes = Wire.contentHeader(channel: 1, bodySize: 12, flags: 0x9000, properties: props)
        #expect(AMQPDecoder.decode(frame: bytes[...]).summary == "content header basic body-size=12 content-type=text/plain delivery-mode=2")
    }

    @Test("property flags continued into a second word for properties basic lacks are a problem")
    func continuationFlags() {
        // 0x8001: content-type present, continuation; 0x8000: a 16th property basic does not define.
        let payload = Wire.u16(60) + Wire.u16(0) + Wire.u64(0) + Wire.u16(0x8001) + Wire.u16(0x8000) + Wire.shortstr("a/b")
        let pdu = AMQPDecoder.decode(frame: Wire.frame(2, channel: 1, payload)[...])
        #expect(pdu.value("properties.content_type") == .string("a/b"))
        #expect(pdu.has("undefined-property"))
    }

    @Test("a message over several body frames is joined and checked against body-size")
    func messageAssembly() {
        let stream = Wire.publish(channel: 1, exchange: "Mobile_Alarm", routingKey: "5", mandatory: true)
            + Wire.contentHeader(channel: 1, bodySize: 12, flags: 0x8000, properties: Wire.shortstr("text/plain"))
            + Wire.body(channel: 1, "hello ")
            + Wire.body(channel: 1, "world!")
        let pdus = AMQPDecoder.decodeAll(stream)
        #expect(pdus.map(\.summary) == ["basic.publish exchange=Mobile_Alarm routing-key=5 mandatory",
                                        "content header basic body-size=12 content-type=text/plain",
                                        "body 6 bytes \"hello \"",
                                        "body 6 bytes \"world!\""])
        #expect(pdus.allSatisfy { $0.problems.isEmpty })
        #expect(pdus[2].field("message") == nil)
        let message = pdus[3]
        #expect(message.value("message.method") == .string("basic.publish"))
        #expect(message.value("message.exchange") == .string("Mobile_Alarm"))
        #expect(message.value("message.routing_key") == .string("5"))
        #expect(message.value("message.properties") == .string("content-type=text/plain"))
        #expect(message.value("message.body_size") == .int(12))
        #expect(message.value("message.body") == .text(preview: "hello world!", length: 12))
        #expect(message.value("message.body_frames") == .int(2))
    }

    @Test("each message repeats its own content header's properties: one with a body, one completed by its header, the next")
    func messagePropertiesOfItsHeader() throws {
        // content-type only (flag bit 15).
        func header(_ type: String, bodySize: UInt64) -> [UInt8] {
            Wire.contentHeader(channel: 1, bodySize: bodySize, flags: 0x8000, properties: Wire.shortstr(type))
        }
        let publish = Wire.publish(channel: 1, exchange: "x", routingKey: "k")
        var options = AMQPOptions()
        options.detail = .json
        let pdus = dissect(Wire.protocolHeader + Wire.method(20, 10, channel: 1, Wire.shortstr(""))
                           + publish + header("a/b", bodySize: 2) + Wire.body(channel: 1, "ok")
                           + publish + header("e/f", bodySize: 0)
                           + publish + header("g/h", bodySize: 2) + Wire.body(channel: 1, "o") + Wire.body(channel: 1, "k"),
                           options: options)
        try #require(pdus.count == 11)
        func contentType(_ pdu: DissectedPDU) -> String? {
            ((Self.jsonObject(pdu)?["message"] as? NSDictionary)?["properties"] as? NSDictionary)?["content_type"] as? String
        }
        #expect(contentType(pdus[4]) == "a/b")
        #expect(contentType(pdus[6]) == "e/f")
        #expect(contentType(pdus[9]) == nil)
        #expect(contentType(pdus[10]) == "g/h")
    }

    @Test("a message with an empty body completes on its content header")
    func emptyBody() {
        let stream = Wire.method(60, 60, channel: 2, Wire.shortstr("ctag") + Wire.u64(7) + [1] + Wire.shortstr("ex") + Wire.shortstr("rk"))
            + Wire.contentHeader(channel: 2, bodySize: 0)
        let pdus = AMQPDecoder.decodeAll(stream)
        #expect(pdus.count == 2)
        #expect(pdus[0].summary == "basic.deliver consumer-tag=ctag delivery-tag=7 redelivered exchange=ex routing-key=rk")
        #expect(pdus[1].value("message.method") == .string("basic.deliver"))
        #expect(pdus[1].value("message.delivery_tag") == .int(7))
        #expect(pdus[1].value("message.body") == .text(preview: "", length: 0))
    }

    @Test("messages on two channels interleave without mixing")
    func interleavedChannels() {
        let stream = Wire.publish(channel: 1, exchange: "a", routingKey: "1")
            + Wire.publish(channel: 2, exchange: "b", routingKey: "2")
            + Wire.contentHeader(channel: 2, bodySize: 3) + Wire.contentHeader(channel: 1, bodySize: 3)
            + Wire.body(channel: 1, "one") + Wire.body(channel: 2, "two")
        let pdus = AMQPDecoder.decodeAll(stream)
        #expect(pdus[4].value("message.exchange") == .string("a"))
        #expect(pdus[4].value("message.body") == .text(preview: "one", length: 3))
        #expect(pdus[5].value("message.exchange") == .string("b"))
        #expect(pdus[5].value("message.body") == .text(preview: "two", length: 3))
    }

    @Test("the body preview is bounded; the body size is the full size")
    func boundedPreview() {
        let big = String(repeating: "ab", count: 1000)
        let stream = Wire.publish(channel: 1, exchange: "", routingKey: "q")
            + Wire.contentHeader(channel: 1, bodySize: 2000) + Wire.body(channel: 1, big)
        let pdus = AMQPDecoder.decodeAll(stream, options: AMQPOptions(bodyPreviewBytes: 10))
        #expect(pdus[2].value("message.body") == .text(preview: "ababababab", length: 2000))
        #expect(pdus[2].value("body") == .text(preview: "ababababab", length: 2000))
    }

    @Test("content out of order is a problem", arguments: [
        (Wire.body(channel: 1, "x"), "unexpected-body"),
        (Wire.contentHeader(channel: 1, bodySize: 1), "unexpected-header"),
        (Wire.publish(channel: 1, exchange: "", routingKey: "q") + Wire.contentHeader(channel: 1, bodySize: 1)
            + Wire.body(channel: 1, "xy"), "body-overrun"),
        (Wire.publish(channel: 1, exchange: "", routingKey: "q") + Wire.publish(channel: 1, exchange: "", routingKey: "q"),
         "message-interrupted"),
    ])
    func outOfOrder(stream: [UInt8], code: String) {
        let pdus = AMQPDecoder.decodeAll(stream)
        #expect(pdus.contains { $0.has(code) })
    }

    @Test("a message left incomplete at the end of the stream is reported")
    func incompleteAtEnd() {
        let pdus = AMQPDecoder.decodeAll(Wire.publish(channel: 1, exchange: "", routingKey: "q") + Wire.contentHeader(channel: 1, bodySize: 10))
        #expect(pdus.contains { $0.has("message-incomplete") })
    }

    @Test("messages are assembled per channel and per direction, their frames interleaved; those left open end per direction")
    func interleavedChannelsAndDirections() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        func send(_ bytes: [UInt8], _ direction: Direction) { d.receive(bytes[...], from: direction, into: &out) }
        func deliver(channel: UInt16, routingKey: String) -> [UInt8] {
            Wire.method(60, 60, channel: channel, Wire.shortstr("ctag") + Wire.u64(1) + [0] + Wire.shortstr("x") + Wire.shortstr(routingKey))
        }
        // Channel 1 carries a publish (to the server) and a delivery (to the client) at once; channel 2 a publish.
        send(Wire.publish(channel: 1, exchange: "x", routingKey: "up-1"), .toServer)
        send(deliver(channel: 1, routingKey: "down-1"), .toClient)
        send(Wire.publish(channel: 2, exchange: "x", routingKey: "up-2"), .toServer)
        send(Wire.contentHeader(channel: 1, bodySize: 4), .toClient)
        send(Wire.contentHeader(channel: 2, bodySize: 2), .toServer)
        send(Wire.contentHeader(channel: 1, bodySize: 3), .toServer)
        send(Wire.body(channel: 1, "dn"), .toClient)
        send(Wire.body(channel: 2, "u2"), .toServer)
        send(Wire.body(channel: 1, "u1!"), .toServer)
        send(Wire.body(channel: 1, "-1"), .toClient)
        #expect(out.count == 10)
        #expect(out.allSatisfy { $0.problems.isEmpty }, "\(out.flatMap(\.problems).map(\.description))")
        let completed = out.filter { $0.value("message") != nil }
        #expect(completed.map { $0.value("message.routing_key") } == [.string("up-2"), .string("up-1"), .string("down-1")])
        #expect(completed.map { $0.value("message.body_size") } == [.int(2), .int(3), .int(4)])
        #expect(completed.map { $0.value("message.body") } == [.text(preview: "u2", length: 2), .text(preview: "u1!", length: 3),
                                                                .text(preview: "dn-1", length: 4)])

        // Left open: a publish on channels 3 and 4 and a delivery on channel 3. Only the client's end with its stream.
        send(Wire.publish(channel: 3, exchange: "x", routingKey: "a"), .toServer)
        send(deliver(channel: 3, routingKey: "b"), .toClient)
        send(Wire.publish(channel: 4, exchange: "x", routingKey: "c") + Wire.contentHeader(channel: 4, bodySize: 9), .toServer)
        out.removeAll()
        d.finish(.toServer, into: &out)
        let ended = out.flatMap(\.problems).filter { $0.code == "message-incomplete" }.map(\.message).sorted()
        #expect(ended.count == 2)
        #expect(ended.first?.contains("basic.publish on channel 3") == true && ended.first?.contains("content header never came") == true)
        #expect(ended.last?.contains("basic.publish on channel 4") == true && ended.last?.contains("0 of 9 body bytes") == true)
        out.removeAll()
        d.finish(.toClient, into: &out)
        let left = out.flatMap(\.problems).filter { $0.code == "message-incomplete" }.map(\.message)
        #expect(left.count == 1)
        #expect(left.first?.contains("basic.deliver on channel 3") == true)
    }

    @Test("a message view repeats the method's routing arguments it has, in the view's order, read from the typed method")
    func messageArguments() {
        let order = ["exchange", "routing-key", "consumer-tag", "delivery-tag", "redelivered", "reply-code", "reply-text", "message-count"]
        var checked = 0
        for spec in AMQPSpec.allMethods {
            let names = spec.messageArguments.map { spec.arguments[$0].name }
            #expect(names == order.filter { name in spec.arguments.contains { $0.name == name } }, "\(spec.fullName)")
            guard spec.carriesContent else { continue }
            // Every argument on the wire, in order, each with a value of its own: the bits of a
            // run packed into one octet (AMQP 0-9-1 §4.2.5.2).
            var bytes = Wire.u16(spec.classID) + Wire.u16(spec.methodID)
            var expected: [String: FieldValue] = [:]
            var bit = 8
            for (i, arg) in spec.arguments.enumerated() {
                if arg.type == .bit {
                    if bit == 8 { bytes.append(0); bit = 0 }
                    if i % 2 == 0 { bytes[bytes.count - 1] |= 1 << UInt8(bit) }
                    bit += 1
                    expected[arg.name] = .bool(i % 2 == 0)
                    continue
                }
                bit = 8
                switch arg.type {
                case .shortstr: bytes += Wire.shortstr("v-\(arg.name)"); expected[arg.name] = .string("v-\(arg.name)")
                case .short: bytes += Wire.u16(UInt16(100 + i)); expected[arg.name] = .int(100 + i)
                case .long: bytes += Wire.u32(UInt32(100 + i)); expected[arg.name] = .int(100 + i)
                case .longlong: bytes += Wire.u64(UInt64(100 + i)); expected[arg.name] = .int(100 + i)
                default: Issue.record("\(spec.fullName): no value written for \(arg.name) (\(arg.type))")
                }
            }
            let decoded = AMQPMethodDecoder(options: AMQPOptions()).decode(bytes[...], isWhole: true)
            #expect(decoded.problems.isEmpty, "\(spec.fullName)")
            guard let method = decoded.method else {
                Issue.record("\(spec.fullName) not decoded")
                continue
            }
            let field = AMQPMessageAssembly(method: spec, arguments: method, previewLimit: 8).field(options: AMQPOptions())
            let shown = field.children.dropFirst().prefix(names.count)
            #expect(shown.map(\.key) == names.map { AMQPSpec.snakeCase($0) }, "\(spec.fullName)")
            #expect(shown.map(\.value) == names.map { expected[$0] }, "\(spec.fullName)")
            checked += 1
        }
        #expect(checked == 4) // basic.publish, return, deliver, get-ok
        // A method read only in part (its frame ended after the routing key): the arguments it has.
        let publish = AMQPSpec.method(classID: 60, methodID: 40)!
        var partial = AMQPBasicPublish()
        partial.ticket = Ranged(0, 11..<13)
        partial.exchange = Ranged("", 13..<14)
        partial.routingKey = Ranged("only-key", 14..<23)
        let message = AMQPMessageAssembly(method: publish, arguments: .basicPublish(partial), previewLimit: 8)
        #expect(message.field(options: AMQPOptions()).children.map(\.key).prefix(4) == ["method", "exchange", "routing_key", "body_size"])
        var text = ByteSink()
        TextTree.write([message.field(options: AMQPOptions())], depth: 1, style: TextTree.Style(), into: &text)
        #expect(String(decoding: text.bytes, as: UTF8.self).contains("\n        Routing-Key: only-key\n"))
    }
}
