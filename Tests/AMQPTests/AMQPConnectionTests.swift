@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing
import TestSupport

/// connection.start-ok with PLAIN credentials guest/guest.
private let startOK: [UInt8] = Wire.method(10, 11, channel: 0,
    Wire.table([("product", [0x53] + Wire.longstr("pika"))])    // client-properties
    + Wire.shortstr("PLAIN")                                     // mechanism
    + Wire.longstr([0] + Array("guest".utf8) + [0] + Array("guest".utf8)) // response: \0guest\0guest
    + Wire.shortstr("en_US"))                                    // locale

private let durableText = "PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'orders' in vhost '/': received 'false' but current is 'true'"

@Suite("AMQP connection")
struct AMQPConnectionTests {
    @Test("summary lines read like the tool people know", arguments: [
        (Wire.publish(channel: 1, exchange: "Mobile_Alarm", routingKey: "5", mandatory: true),
         "basic.publish exchange=Mobile_Alarm routing-key=5 mandatory"),
        (Wire.method(50, 10, channel: 1, Wire.u16(0) + Wire.shortstr("orders") + [0b0000_0010] + Wire.table([])),
         "queue.declare queue=orders durable"),
        (Wire.body(channel: 1, "hello world!"), "body 12 bytes \"hello world!\""),
        (Wire.heartbeat, "heartbeat"),
        (Wire.protocolHeader, "protocol header AMQP 0-9-1"),
        (startOK, "connection.start-ok mechanism=PLAIN user=guest"),
        (Wire.tune(30, channelMax: 2047, frameMax: 131_072, heartbeat: 60), "connection.tune channel-max=2047 frame-max=131072 heartbeat=60"),
        (Wire.method(60, 120, channel: 1, Wire.u64(9) + [0b11]), "basic.nack delivery-tag=9 multiple requeue"),
        (Wire.close(channel: 1, code: 406, text: durableText, failedClass: 50, failedMethod: 10),
         "channel.close 406 PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'orders' in vhost '/': received 'false' b... (queue.declare)"),
        (Wire.close(classID: 10, methodID: 50, channel: 0, code: 320, text: "shutdown", failedClass: 0, failedMethod: 0),
         "connection.close 320 CONNECTION_FORCED shutdown"),
    ])
    func summaries(bytes: [UInt8], summary: String) {
        let pdus = AMQPDecoder.decodeAll(bytes)
        #expect(pdus.count == 1)
        #expect(pdus.first?.summary == summary)
        #expect(pdus.first?.fields.first?.key == "frame_type")
    }

    @Test("the SASL response is a secret; the PLAIN user is shown apart")
    func secrets() {
        let pdu = dissect(Wire.protocolHeader + startOK)[1]
        #expect(pdu.value("arguments.response") == .secret("\\0guest\\0guest"))
        #expect(pdu.value("sasl_user") == .string("guest"))
        #expect(pdu.value("arguments.mechanism") == .string("PLAIN"))
        #expect(pdu.value("arguments.client_properties.product") == .text(preview: "pika", length: 4))
        #expect(!pdu.summary.contains("\\0guest"))
        // update-secret's new secret is hidden as well.
        let update = AMQPDecoder.decode(frame: Wire.method(10, 70, channel: 0, Wire.longstr("token") + Wire.shortstr("refresh"))[...])
        #expect(update.value("arguments.new_secret") == .secret("token"))
        #expect(!update.summary.contains("token"))
    }

    @Test("channel.close names the reply code and the failed method, and explains an inequivalent durable flag")
    func closeDurable() {
        let declare = Wire.method(50, 10, channel: 1, Wire.u16(0) + Wire.shortstr("orders") + [0] + Wire.table([]))
        let close = Wire.close(channel: 1, code: 406, text: durableText, failedClass: 50, failedMethod: 10)
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(declare[...], from: .toServer, into: &out)
        d.receive(close[...], from: .toClient, into: &out)
        let pdu = out[1]
        #expect(pdu.value("arguments.reply_code") == .int(406))
        #expect(pdu.value("reason") == .string("PRECONDITION_FAILED"))
        #expect(pdu.value("arguments.reply_code.reply_code_name") == nil)
        #expect(pdu.value("arguments.method_id.failed_method") == .string("queue.declare"))
        let explanation = pdu.value("explanation")?.stringValue ?? ""
        #expect(explanation.contains("The queue 'orders' already exists in vhost '/' with durable=true"))
        #expect(explanation.contains("this declare asked for durable=false"))
        #expect(explanation.contains("same durable, exclusive and auto-delete flags and the same arguments"))
        #expect(explanation.contains("delete the queue first"))
    }

    @Test("404 no queue after a passive declare or a consume explains the queue does not exist", arguments: [
        (UInt16(10), Wire.u16(0) + Wire.shortstr("jobs") + [0b0000_0001] + Wire.table([]), "A passive queue.declare only checks"),
        (UInt16(20), Wire.u16(0) + Wire.shortstr("jobs") + Wire.shortstr("") + [0] + Wire.table([]), "basic.consume needs an existing queue"),
    ])
    func closeNoQueue(methodID: UInt16, arguments: [UInt8], phrase: String) {
        let classID: UInt16 = methodID == 10 ? 50 : 60
        let request = Wire.method(classID, methodID, channel: 1, arguments)
        let close = Wire.close(channel: 1, code: 404, text: "NOT_FOUND - no queue 'jobs' in vhost '/'",
                               failedClass: classID, failedMethod: methodID)
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(request[...], from: .toServer, into: &out)
        d.receive(close[...], from: .toClient, into: &out)
        let explanation = out[1].value("explanation")?.stringValue ?? ""
        #expect(explanation.hasPrefix("The queue 'jobs' does not exist in vhost '/'."))
        #expect(explanation.contains(phrase))
        #expect(explanation.contains("exclusive or auto-delete"))
        #expect(explanation.contains("server-named"))
    }

    @Test("403 ACCESS_REFUSED explains permissions or login")
    func accessRefused() {
        let close = Wire.close(classID: 10, methodID: 50, channel: 0, code: 403,
                               text: "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile.",
                               failedClass: 0, failedMethod: 0)
        let pdu = AMQPDecoder.decode(frame: close[...])
        #expect(pdu.value("explanation")?.stringValue?.hasPrefix("The broker refused the login") == true)
        #expect(AMQPCloseExplanation.explain(.init(replyCode: 403, replyText: "ACCESS_REFUSED - access to queue 'q' refused", failedMethod: nil))?
            .contains("permission") == true)
        #expect(AMQPCloseExplanation.explain(.init(replyCode: 999, replyText: "", failedMethod: nil)) == nil)
    }

    /// RabbitMQ's own reply texts (rabbit_misc:equivalence_fail, rabbit_amqqueue:check_exclusive_access,
    /// rabbit_access_control, rabbit_channel:check_name) with what the explanation must and must not say.
    static let closeExplanations: [(code: Int, text: String, says: [String], never: [String])] = [
        // RabbitMQ reports an exclusive flag that differs from the existing queue's as 405, not as an inequivalent arg.
        (405, "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'q' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.",
         ["locked by another connection", "declared exclusive there", "exclusive flag differs from the original declaration"], ["permission"]),
        (405, "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'jobs' in vhost '/'",
         ["The queue is locked by another connection", "only that connection may use it"], []),
        (406, "PRECONDITION_FAILED - inequivalent arg 'auto_delete' for queue 'q' in vhost '/': received 'true' but current is 'false'",
         ["The queue 'q' already exists in vhost '/' with auto_delete=false", "this declare asked for auto_delete=true",
          "same durable, exclusive and auto-delete flags", "delete the queue first"], ["exchange"]),
        (406, "PRECONDITION_FAILED - inequivalent arg 'auto_delete' for exchange 'logs' in vhost '/': received 'true' but current is 'false'",
         ["The exchange 'logs' already exists in vhost '/' with auto_delete=false", "this declare asked for auto_delete=true",
          "same type, durable, auto-delete and internal flags", "delete the exchange first"], ["queue '"]),
        (406, "PRECONDITION_FAILED - inequivalent arg 'type' for exchange 'logs' in vhost '/': received 'fanout' but current is 'direct'",
         ["The exchange 'logs' already exists in vhost '/' with type=direct", "this declare asked for type=fanout"], []),
        (406, "PRECONDITION_FAILED - inequivalent arg 'x-max-length' for queue 'q' in vhost '/': received the value '10' of type 'signedint' but current is none",
         ["The queue 'q' already exists in vhost '/' without x-max-length", "this declare asked for x-max-length=10 (signedint)",
          "the same arguments"], ["=none", "?"]),
        (406, "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'orders' in vhost '/': received none but current is the value 'quorum' of type 'longstr'",
         ["The queue 'orders' already exists in vhost '/' with x-queue-type=quorum (longstr)", "this declare did not set x-queue-type"], ["=none"]),
        (406, "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost 'prod': received the value '60000' of type 'long' but current is the value '30000' of type 'signedint'",
         ["already exists in vhost 'prod' with x-message-ttl=30000 (signedint)", "this declare asked for x-message-ttl=60000 (long)"], []),
        (403, "ACCESS_REFUSED - access to queue 'q' in vhost '/' refused for user 'app'",
         ["lacks the configure, write or read permission", "rabbitmqctl list_permissions"], []),
        (403, "ACCESS_REFUSED - queue name 'amq.jobs' contains reserved prefix 'amq.*'",
         ["The queue name 'amq.jobs' starts with 'amq.'", "reserves", "empty name"], ["permission"]),
        (403, "ACCESS_REFUSED - exchange name 'amq.events' contains reserved prefix 'amq.*'",
         ["The exchange name 'amq.events' starts with 'amq.'", "Choose another name."], ["permission", "empty name"]),
        (403, "ACCESS_REFUSED - operation not permitted on the default exchange",
         ["The default exchange (named '') cannot be declared, deleted or bound", "routing key"], ["permission"]),
    ]

    @Test("a short string that is not printable UTF-8 shows as escaped bytes: \\0, \\\\ and \\xNN")
    func escapedShortString() {
        let name: [UInt8] = [0x61, 0x00, 0x5C, 0xFF, 0x7F, 0x0A, 0x62]
        let declare = Wire.method(50, 10, channel: 1, Wire.u16(0) + [UInt8(name.count)] + name + [0] + Wire.table([]))
        let pdu = AMQPDecoder.decode(frame: declare[...])
        #expect(pdu.value("arguments.queue") == .string("a\\0\\\\\\xFF\\x7F\\x0Ab"))
        #expect(AMQPText.escaped([0x20, 0x7E, 0x1F, 0x80][...]) == " ~\\x1F\\x80")
        #expect(AMQPText.escaped([][...]) == "")
    }

    @Test("reply texts are searched on Character boundaries: non-ASCII text, a combining mark after a marker, a prepended mark before one")
    func replyTextSearch() {
        let text = "PRÉCONDITION – inequivalent arg 'dürable' for queue 'ördérs' in vhost 'ü': received 'fälse' but current is 'trüe'"
        #expect(AMQPCloseExplanation.quoted(after: "inequivalent arg", in: text) == "dürable")
        #expect(AMQPCloseExplanation.quoted(after: "for queue", in: text) == "ördérs")
        #expect(AMQPCloseExplanation.quoted(after: "in vhost", in: text) == "ü")
        #expect(AMQPCloseExplanation.equivalenceSides(text) == ("fälse", "trüe"))
        // "g" and a combining acute accent are one Character, not the marker's "g": the next one counts.
        #expect(AMQPCloseExplanation.quoted(after: "inequivalent arg", in: "inequivalent arg\u{301} 'x', inequivalent arg 'y'") == "y")
        // U+0600 is a prepended mark: with the "i" after it, one Character, not the marker's "i".
        #expect(AMQPCloseExplanation.quoted(after: "inequivalent arg", in: "\u{600}inequivalent arg 'w' inequivalent arg 'v'") == "v")
        #expect(AMQPCloseExplanation.quoted(after: "in vhost", in: "no marker here") == nil)
        #expect(AMQPCloseExplanation.equivalenceSides("received 'a'") == ("?", "?"))
    }

    @Test("close explanations say what RabbitMQ's reply text means", arguments: closeExplanations.indices)
    func closeExplanation(index: Int) {
        let row = AMQPConnectionTests.closeExplanations[index]
        let explanation = AMQPCloseExplanation.explain(.init(replyCode: row.code, replyText: row.text, failedMethod: nil)) ?? ""
        for phrase in row.says {
            #expect(explanation.contains(phrase), "\(row.text) → \(explanation)")
        }
        for phrase in row.never {
            #expect(!explanation.contains(phrase), "\(row.text) → \(explanation)")
        }
    }

    @Test("a frame larger than the negotiated frame-max is a problem")
    func frameMaxExceeded() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(Wire.protocolHeader[...], from: .toServer, into: &out)
        d.receive(Wire.tune(30, channelMax: 2047, frameMax: 8192, heartbeat: 60)[...], from: .toClient, into: &out)
        d.receive(Wire.tune(31, channelMax: 2047, frameMax: 4096, heartbeat: 60)[...], from: .toServer, into: &out)
        let small = Wire.body(channel: 1, String(repeating: "a", count: 4088))    // exactly 4096 on the wire
        let large = Wire.body(channel: 1, String(repeating: "a", count: 4089))
        d.receive(small[...], from: .toServer, into: &out)
        d.receive(large[...], from: .toServer, into: &out)
        d.receive(Wire.method(60, 80, channel: 3000, Wire.u64(1) + [0])[...], from: .toServer, into: &out)
        #expect(out.count == 6)
        #expect(!out[3].has("frame-max-exceeded"))
        #expect(out[4].has("frame-max-exceeded"))
        #expect(out[5].has("channel-max-exceeded"))
    }

    @Test("content out of context is an error on a connection seen whole, a note once its direction lost frame sync (a skipped stray byte)")
    func contentAfterLostSync() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(Wire.protocolHeader[...], from: .toServer, into: &out)
        d.receive(Wire.body(channel: 1, "early")[...], from: .toServer, into: &out)
        // A stray byte before a frame: the framer skips it, and says so on that frame.
        d.receive(([0x99] + Wire.body(channel: 1, "after"))[...], from: .toServer, into: &out)
        d.receive(Wire.body(channel: 1, "later")[...], from: .toServer, into: &out)
        #expect(out.count == 4, "\(out.map(\.summary))")
        func unexpected(_ pdu: DissectedPDU) -> Problem.Severity? { pdu.problems.first { $0.code == "unexpected-body" }?.severity }
        #expect(unexpected(out[1]) == .error)
        #expect(out[2].has("resync-skipped"))
        #expect(unexpected(out[2]) == .note)
        #expect(unexpected(out[3]) == .note)
    }

    @Test("limits a tune-ok sets in a segment apply to the frames after it in the same segment, when the framer resynchronises")
    func limitsWithinOneSegment() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(Wire.protocolHeader[...], from: .toServer, into: &out)
        d.receive(Wire.tune(30, channelMax: 5, frameMax: 131_072, heartbeat: 60)[...], from: .toClient, into: &out)
        // One segment: tune-ok (channel-max 5), a stray byte that costs frame sync, a frame on
        // channel 7 (above the limit just agreed: not a plausible frame to resynchronise on),
        // then one on channel 1.
        let ack = Wire.method(60, 80, channel: 7, Wire.u64(1) + [0])
        let segment = Wire.tune(31, channelMax: 5, frameMax: 131_072, heartbeat: 60) + [0x99] + ack
            + Wire.method(20, 10, channel: 1, Wire.shortstr(""))
        d.receive(segment[...], from: .toServer, into: &out)
        let after = Array(out.dropFirst(3))
        #expect(after.count == 1)
        #expect(after.first?.summary.hasPrefix("channel.open") == true)
        #expect(after.first?.problems.first { $0.code == "resync-skipped" }?.message.contains("\(1 + ack.count) bytes") == true,
                "\(after.flatMap(\.problems).map(\.description))")
    }

    @Test("publisher confirms: publishes are numbered and the broker's acks say which they confirm")
    func publisherConfirms() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(Wire.method(85, 10, channel: 1, [0])[...], from: .toServer, into: &out)
        d.receive(Wire.method(85, 11, channel: 1, [])[...], from: .toClient, into: &out)
        for _ in 0..<3 {
            d.receive((Wire.publish(channel: 1, exchange: "", routingKey: "q") + Wire.contentHeader(channel: 1, bodySize: 0))[...],
                      from: .toServer, into: &out)
        }
        d.receive(Wire.method(60, 80, channel: 1, Wire.u64(2) + [1])[...], from: .toClient, into: &out)
        d.receive(Wire.method(60, 120, channel: 1, Wire.u64(3) + [0b10])[...], from: .toClient, into: &out)
        // A consumer's ack from the client is not a confirm.
        d.receive(Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])[...], from: .toServer, into: &out)
        #expect(out.compactMap { $0.value("publish_seq") } == [.int(1), .int(2), .int(3)])
        #expect(out.compactMap { $0.value("confirms") } == [
            .string("confirms publishes up to #2"),
            .string("rejects (the broker could not take responsibility for) publish #3"),
        ])
    }

    @Test("tune-ok asking for more than the server offered is a problem")
    func tuneAboveProposal() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive(Wire.tune(30, channelMax: 0, frameMax: 131_072, heartbeat: 60)[...], from: .toClient, into: &out)
        d.receive(Wire.tune(31, channelMax: 0, frameMax: 262_144, heartbeat: 60)[...], from: .toServer, into: &out)
        #expect(out[1].has("frame-max-above-proposal"))
    }

    @Test("a client stream that starts with a frame instead of the protocol header is a problem")
    func missingProtocolHeader() {
        #expect(dissect(Wire.heartbeat).first?.has("no-protocol-header") == true)
        #expect(dissect(Wire.protocolHeader + Wire.heartbeat).allSatisfy { !$0.has("no-protocol-header") })
    }

    @Test("frames on the wrong channel are problems", arguments: [
        (Wire.frame(8, channel: 1, []), "heartbeat-channel"),
        (Wire.frame(8, channel: 0, [1]), "heartbeat-payload"),
        (Wire.method(10, 61, channel: 1, []), "wrong-channel"),
        (Wire.publish(channel: 0, exchange: "", routingKey: "q"), "wrong-channel"),
    ])
    func wrongChannel(bytes: [UInt8], code: String) {
        #expect(AMQPDecoder.decode(frame: bytes[...]).has(code))
    }

    @Test("random bytes never trap, whatever the start and chunking", arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func randomBytes(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let options = AMQPOptions(bodyPreviewBytes: 16, maxHeldFrameBytes: 512, maxFieldTableDepth: 8)
        for round in 0..<40 {
            let count = Int.random(in: 0..<2000, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Half the rounds start from a valid stream with random bytes changed, to reach deeper paths.
            if round % 2 == 0 {
                bytes = Wire.protocolHeader + startOK + Wire.publish(channel: 1, exchange: "e", routingKey: "k")
                    + Wire.contentHeader(channel: 1, bodySize: 5, flags: 0xFFFC, properties: fullHeader) + Wire.body(channel: 1, "hello")
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: round % 3 == 0, serverPort: 5672), options: options)
            var out: [DissectedPDU] = []
            var i = 0
            while i < bytes.count {
                let n = Int.random(in: 1...64, using: &rng)
                d.receive(bytes[i..<min(i + n, bytes.count)], from: round % 4 < 2 ? .toServer : .toClient, into: &out)
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    d.gap(Int.random(in: 1...100, using: &rng), in: .toServer, into: &out)
                }
                i += n
            }
            d.finish(.toServer, into: &out)
            d.finish(.toClient, into: &out)
            let total = out.reduce(0) { $0 + $1.wireLength }
            #expect(total >= 0)
            _ = AMQPDecoder.decodeAll(bytes, options: options)
        }
    }
}

private let fullHeader: [UInt8] =
    Wire.shortstr("text/plain") + Wire.shortstr("utf-8") + Wire.table([("h", [0x46] + Wire.table([("n", [0x56])]))])
    + [2, 0] + Wire.shortstr("c") + Wire.shortstr("r") + Wire.shortstr("1") + Wire.shortstr("m") + Wire.u64(0)
    + Wire.shortstr("t") + Wire.shortstr("u") + Wire.shortstr("a") + Wire.shortstr("")

@Suite("AMQP connection dissector, a segment a part at a time")
struct AMQPReceiveInPartsTests {
    @Test("600 frames in one segment, limited to 100 PDUs a call: the same PDUs as all at once, in parts of at most 100")
    func parts() {
        var segment = Wire.protocolHeader
        for i in 0..<200 {
            segment += Wire.publish(channel: 1, exchange: "x", routingKey: "k\(i)")
            segment += Wire.contentHeader(channel: 1, bodySize: 3)
            segment += Wire.body(channel: 1, "b\(i % 10)\(i % 7)")
        }
        let info = ConnectionInfo(startedMidStream: false, serverPort: 5672)
        var whole = AMQPConnectionDissector(info: info, options: AMQPOptions())
        var parted = whole
        var all: [DissectedPDU] = []
        whole.receive(segment[...], from: .toServer, into: &all)
        whole.finish(.toServer, into: &all)

        let fed = receiveInParts(segment[...], to: &parted, from: .toServer, limit: 100)
        var inParts = fed.pdus
        let sizes = fed.parts
        var end: [DissectedPDU] = []
        parted.finish(.toServer, into: &end)
        inParts += end

        #expect(all.count == 601)
        #expect(sizes.allSatisfy { $0 <= 100 })
        #expect(sizes.prefix(6) == [100, 100, 100, 100, 100, 100])
        #expect(readings(inParts) == readings(all))
    }
}
