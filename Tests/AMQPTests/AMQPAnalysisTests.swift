@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

/// Each connection's deliveries followed to the client's acknowledgements, and its publishes in
/// confirm mode to the broker's confirms (issue #29): the links on the PDUs, in words and fields,
/// and the records of what a channel or the connection left.
@Suite("AMQP analysis: acknowledgements, confirms, prefetch")
struct AMQPAnalysisTests {
    /// What a connection made of `steps` (each a direction and its bytes, in frame 1, 2, … a
    /// millisecond apart): its PDUs with the frame they came in, the records found along the way,
    /// and those of its end.
    struct Run {
        var pdus: [(frame: Int, pdu: DissectedPDU)] = []
        var records: [AnalysisRecord] = []
        /// What the connection's end said of it (its publisher confirms).
        var analysis: ConnectionAnalysis?

        /// The PDUs of method `name`, in order.
        func pdus(_ name: String) -> [(frame: Int, pdu: DissectedPDU)] {
            pdus.filter { $0.pdu.value("method") == .string(name) }
        }
    }

    static func run(_ steps: [(Direction, [UInt8])], analysis: Bool = true) -> Run {
        var options = AMQPOptions()
        options.analysis = analysis
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: options)
        var run = Run()
        for (i, (direction, bytes)) in steps.enumerated() {
            let frame = i + 1
            d.locate(frame: frame, time: Timestamp(seconds: 100, nanoseconds: UInt32(frame) * 1_000_000))
            var out: [DissectedPDU] = []
            d.receive(bytes[...], from: direction, into: &out)
            run.pdus += out.map { (frame, $0) }
            d.takeRecords(into: &run.records)
        }
        run.analysis = d.end("the client closed it", record: { run.records.append($0) })
        return run
    }

    static func message(channel: UInt16, _ text: String = "ok") -> [UInt8] {
        Wire.contentHeader(channel: channel, bodySize: UInt64(text.utf8.count)) + Wire.body(channel: channel, text)
    }

    static func deliver(tag: UInt64, redelivered: Bool = false) -> [UInt8] {
        Wire.method(60, 60, channel: 2, Wire.shortstr("ctag") + Wire.u64(tag) + [redelivered ? 1 : 0] + Wire.shortstr("")
                    + Wire.shortstr("q")) + message(channel: 2)
    }

    /// A publisher in confirm mode on channel 1 and a consumer with a prefetch of 1 on channel 2.
    static let conversation: [(Direction, [UInt8])] = [
        (.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 1, Wire.shortstr(""))
            + Wire.method(20, 10, channel: 2, Wire.shortstr(""))),                                        // 1
        (.toClient, Wire.method(20, 11, channel: 1, Wire.longstr("")) + Wire.method(20, 11, channel: 2, Wire.longstr(""))),
        (.toServer, Wire.method(85, 10, channel: 1, [0])),                                                // 3 confirm.select
        (.toServer, Wire.publish(channel: 1, exchange: "", routingKey: "q") + message(channel: 1)),      // 4 publish 1
        (.toServer, Wire.publish(channel: 1, exchange: "", routingKey: "q") + message(channel: 1)),      // 5 publish 2
        (.toServer, Wire.publish(channel: 1, exchange: "", routingKey: "q") + message(channel: 1)),      // 6 publish 3
        (.toClient, Wire.method(60, 80, channel: 1, Wire.u64(2) + [1])),                                  // 7 ack 2, multiple
        (.toServer, Wire.publish(channel: 1, exchange: "", routingKey: "q") + message(channel: 1)),      // 8 publish 4
        (.toClient, Wire.method(60, 120, channel: 1, Wire.u64(4) + [0])),                                 // 9 nack 4
        (.toServer, Wire.method(60, 10, channel: 2, Wire.u32(0) + Wire.u16(1) + [0])),                    // 10 basic.qos 1
        (.toServer, Wire.method(60, 20, channel: 2, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("ctag") + [0]
                                + Wire.table([]))),                                                      // 11 basic.consume
        (.toClient, Wire.method(60, 21, channel: 2, Wire.shortstr("ctag"))),                              // 12
        (.toClient, deliver(tag: 1)),                                                                     // 13
        (.toServer, Wire.method(60, 80, channel: 2, Wire.u64(1) + [0])),                                  // 14 ack 1
        (.toClient, deliver(tag: 2)),                                                                     // 15
        (.toServer, Wire.method(60, 120, channel: 2, Wire.u64(2) + [2])),                                 // 16 nack 2, requeue
        (.toClient, deliver(tag: 3, redelivered: true)),                                                  // 17
        (.toClient, deliver(tag: 4)),                                                                     // 18
        (.toServer, Wire.method(60, 80, channel: 2, Wire.u64(4) + [1])),                                  // 19 ack 4, multiple
        (.toClient, deliver(tag: 5)),                                                                     // 20
        (.toServer, Wire.close(channel: 2, code: 200, text: "bye", failedClass: 0, failedMethod: 0)),   // 21
        (.toClient, Wire.method(20, 41, channel: 2, [])),                                                 // 22 close-ok
    ]

    @Test("the client's acknowledgements name the deliveries they settle, with the time since, a requeue and a redelivery")
    func acknowledgements() throws {
        let run = Self.run(Self.conversation)
        let acks = run.pdus("basic.ack").filter { $0.frame > 10 }
        try #require(acks.count == 2)
        #expect(acks[0].pdu.value("ack.deliveries") == .int(1))
        #expect(acks[0].pdu.value("ack.delivery_frame") == .int(13))
        #expect(acks[0].pdu.value("ack.latency_us") == .int(1000))
        #expect(acks[0].pdu.annotations == ["acknowledges #13 in 1.00 ms"])
        let nack = try #require(run.pdus("basic.nack").first { $0.frame == 16 })
        #expect(nack.pdu.value("ack.delivery_frame") == .int(15))
        #expect(nack.pdu.value("ack.requeue") == .bool(true))
        #expect(nack.pdu.annotations == ["rejects #15 in 1.00 ms, requeued"])
        let redelivery = try #require(run.pdus("basic.deliver").first { $0.frame == 17 })
        #expect(redelivery.pdu.value("redelivery_of") == .int(15))
        #expect(redelivery.pdu.annotations == ["redelivery of #15"])
        // The multiple ack at 19 settles the deliveries of 17 and 18, the oldest 2 ms before.
        #expect(acks[1].pdu.value("ack.deliveries") == .int(2))
        #expect(acks[1].pdu.value("ack.delivery_frame") == .int(17))
        #expect(acks[1].pdu.value("ack.last_delivery_frame") == .int(18))
        #expect(acks[1].pdu.value("ack.latency_us") == .int(2000))
        #expect(acks[1].pdu.annotations == ["acknowledges 2 deliveries, #17 to #18, the oldest after 2.00 ms"])
    }

    @Test("the broker's confirms name the publishes they cover; a nack rejects; none left open is recorded")
    func confirms() throws {
        let run = Self.run(Self.conversation)
        let confirm = try #require(run.pdus("basic.ack").first { $0.frame == 7 })
        #expect(confirm.pdu.value("confirm.publishes") == .int(2))
        #expect(confirm.pdu.value("confirm.publish_frame") == .int(4))
        #expect(confirm.pdu.value("confirm.last_publish_frame") == .int(5))
        #expect(confirm.pdu.value("confirm.latency_us") == .int(3000))
        #expect(confirm.pdu.annotations == ["confirms 2 publishes, #4 to #5, the oldest after 3.00 ms"])
        let nack = try #require(run.pdus("basic.nack").first { $0.frame == 9 })
        #expect(nack.pdu.value("confirm.publish_frame") == .int(8))
        #expect(nack.pdu.annotations == ["rejects #8 in 1.00 ms"])
        // The third publish (frame 6) got no confirm: recorded when the connection ended.
        let unconfirmed = run.records.filter { $0.kind == .unconfirmed }
        try #require(unconfirmed.count == 1)
        #expect(unconfirmed[0].frames == [6])
        #expect(unconfirmed[0].message.hasPrefix("the connection ended (the client closed it) with 1 publish in confirm mode"))
        // Three confirmed (two acked, one nacked), after 3, 2 and 1 ms; one never.
        let flows = try #require(run.analysis?.flows)
        #expect(flows.completed == 3 && flows.incomplete == 1)
        #expect(flows.latency.maximum == 3000 && flows.latency.minimum == 1000)
    }

    @Test("a channel that closes with a delivery unacknowledged, and held at its prefetch, leaves its records")
    func channelRecords() throws {
        let run = Self.run(Self.conversation)
        let unacknowledged = run.records.filter { $0.kind == .unacknowledged }
        try #require(unacknowledged.count == 1)
        #expect(unacknowledged[0].frames == [20])
        #expect(unacknowledged[0].message == "channel 2 closed with 1 delivery from queue 'q' not acknowledged: the broker queues it again")
        #expect(unacknowledged[0].fields.first { $0.key == "queue" }?.value == .string("q"))
        let limited = run.records.filter { $0.kind == .prefetchLimited }
        try #require(limited.count == 1)
        // Deliveries 13, 15, 17 and 20 each filled the prefetch of 1; 18 came while 17 was
        // still unacknowledged (a broker past the limit), and counts too.
        #expect(limited[0].frames == [13, 15, 17, 18, 20])
        #expect(limited[0].fields.first { $0.key == "prefetch_count" }?.value == .int(1))
        #expect(limited[0].fields.first { $0.key == "consumer_tag" }?.value == .string("ctag"))
        #expect(limited[0].message.hasPrefix("consumer 'ctag' on queue 'q' (channel 2) reached its prefetch-count of 1 unacknowledged deliveries 5 times"))
    }

    /// basic.qos on channel 2 (`global` as given), then consumers `a` and `b` on queue q.
    static func twoConsumers(prefetch: UInt16, global: Bool) -> [(Direction, [UInt8])] {
        func consume(_ tag: String) -> [(Direction, [UInt8])] {
            [(.toServer, Wire.method(60, 20, channel: 2, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr(tag) + [0] + Wire.table([]))),
             (.toClient, Wire.method(60, 21, channel: 2, Wire.shortstr(tag)))]
        }
        func deliver(_ tag: String, _ n: UInt64) -> (Direction, [UInt8]) {
            (.toClient, Wire.method(60, 60, channel: 2, Wire.shortstr(tag) + Wire.u64(n) + [0] + Wire.shortstr("") + Wire.shortstr("q"))
                + message(channel: 2))
        }
        func ack(_ n: UInt64) -> (Direction, [UInt8]) { (.toServer, Wire.method(60, 80, channel: 2, Wire.u64(n) + [0])) }
        return [(.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 2, Wire.shortstr(""))),            // 1
                (.toClient, Wire.method(20, 11, channel: 2, Wire.longstr(""))),                                   // 2
                (.toServer, Wire.method(60, 10, channel: 2, Wire.u32(0) + Wire.u16(prefetch) + [global ? 1 : 0])), // 3 basic.qos
                (.toClient, Wire.method(60, 11, channel: 2, []))]                                                 // 4 qos-ok
            + consume("a") + consume("b")                                                                       // 5-8
            + [deliver("a", 1), deliver("b", 2), ack(1), ack(2),                                                 // 9-12
               deliver("a", 3), deliver("b", 4), ack(3), ack(4),                                                 // 13-16
               (.toServer, Wire.method(60, 70, channel: 2, Wire.u16(0) + Wire.shortstr("q") + [0])),            // 17 basic.get
               (.toClient, Wire.method(60, 71, channel: 2, Wire.u64(5) + [0] + Wire.shortstr("") + Wire.shortstr("q") + Wire.u32(0))
                   + message(channel: 2)),                                                                        // 18 get-ok
               deliver("a", 6), ack(6), ack(5)]                                                                  // 19-21
    }

    @Test("prefetch without global holds each consumer to its own count; with global the channel's consumers together; a get is not held")
    func prefetchPerConsumer() throws {
        // Two consumers with a prefetch of 1 each: every delivery fills its own consumer's window,
        // the other's delivery in flight beside it (as RabbitMQ allows); basic.get counts for neither.
        let each = Self.run(Self.twoConsumers(prefetch: 1, global: false)).records.filter { $0.kind == .prefetchLimited }
        try #require(each.count == 2)
        #expect(each.map { $0.fields.first { $0.key == "consumer_tag" }?.value } == [.string("a"), .string("b")])
        #expect(each[0].frames == [9, 13, 19])
        #expect(each[1].frames == [10, 14])
        #expect(each.allSatisfy { $0.fields.first { $0.key == "global" } == nil })
        // A prefetch of 2 for each: never reached, though two deliveries were in flight on the channel.
        #expect(Self.run(Self.twoConsumers(prefetch: 2, global: false)).records.filter { $0.kind == .prefetchLimited }.isEmpty)
        // A global prefetch of 2: the second delivery of each pair fills the channel's window.
        let channel = Self.run(Self.twoConsumers(prefetch: 2, global: true)).records.filter { $0.kind == .prefetchLimited }
        try #require(channel.count == 1)
        #expect(channel[0].frames == [10, 14])
        #expect(channel[0].fields.first { $0.key == "global" }?.value == .bool(true))
        #expect(channel[0].message.hasPrefix("channel 2 reached its global prefetch-count of 2 unacknowledged deliveries 2 times"))
    }

    @Test("a consumer whose basic.consume came before the capture is followed from its first delivery; one that never acks is not blamed")
    func consumerBeforeCapture() throws {
        func deliver(_ tag: String, _ n: UInt64) -> (Direction, [UInt8]) {
            (.toClient, Wire.method(60, 60, channel: 2, Wire.shortstr(tag) + Wire.u64(n) + [0] + Wire.shortstr("") + Wire.shortstr("q"))
                + Self.message(channel: 2))
        }
        let run = Self.run([
            (.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 2, Wire.shortstr(""))),   // 1
            (.toClient, Wire.method(20, 11, channel: 2, Wire.longstr(""))),                          // 2
            deliver("old", 1),                                                                        // 3
            deliver("quiet", 2),                                                                      // 4
            (.toServer, Wire.method(60, 80, channel: 2, Wire.u64(1) + [0])),                          // 5 ack 1
            deliver("old", 3),                                                                        // 6
            deliver("quiet", 4),                                                                      // 7
        ])
        let ack = try #require(run.pdus("basic.ack").first)
        #expect(ack.pdu.annotations == ["acknowledges #3 in 2.00 ms"])
        #expect(ack.pdu.value("queue") == nil)
        let consumers = run.records.filter { $0.kind == .consumer }
        try #require(consumers.count == 2)
        #expect(consumers.map(\.frames) == [[3], [4]])
        #expect(consumers.allSatisfy { $0.fields.first { $0.key == "before_capture" }?.value == .bool(true) })
        #expect(consumers.allSatisfy { $0.fields.first { $0.key == "queue" } == nil })
        #expect(consumers[0].fields.first { $0.key == "acknowledged" }?.value == .int(1))
        #expect(consumers[0].message.hasPrefix("consumer 'old' (its basic.consume came before the capture; channel 2), from its first delivery #3: 2 deliveries"))
        // 'old' acknowledges, so its delivery of frame 6 is left unacknowledged; 'quiet' may be a
        // no-ack consumer: its deliveries are not reported.
        let unacknowledged = run.records.filter { $0.kind == .unacknowledged }
        try #require(unacknowledged.count == 1)
        #expect(unacknowledged[0].frames == [6])
        #expect(unacknowledged[0].message == "the connection ended (the client closed it) with 1 delivery not acknowledged: the broker queues it again")
    }

    @Test("a basic.consume with nowait starts its consumer at once, with no consume-ok to wait for")
    func nowaitConsumer() throws {
        // AMQP 0-9-1 basic.consume: with nowait set the server sends no consume-ok, so the
        // client's tag is the consumer's from the consume itself. (The state once looked the bit
        // up as "no-wait", a name the spec does not use, and took the consumer for one that
        // predated the capture.)
        let run = Self.run([
            (.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 2, Wire.shortstr(""))),   // 1
            (.toClient, Wire.method(20, 11, channel: 2, Wire.longstr(""))),                          // 2
            // 3 basic.consume: ticket, queue, consumer-tag, bits no-local no-ack exclusive nowait (3), arguments.
            (.toServer, Wire.method(60, 20, channel: 2, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("ctag")
                                    + [0b0000_1000] + Wire.table([]))),
            (.toClient, Self.deliver(tag: 1)),                                                        // 4
            (.toServer, Wire.method(60, 80, channel: 2, Wire.u64(1) + [0])),                          // 5 ack 1
        ])
        let consumers = run.records.filter { $0.kind == .consumer }
        try #require(consumers.count == 1)
        func value(_ key: String) -> FieldValue? { consumers[0].fields.first { $0.key == key }?.value }
        #expect(consumers[0].frames == [3])
        #expect(value("before_capture") != .bool(true))
        #expect(value("queue") == .string("q"))
        #expect(value("deliveries") == .int(1))
        #expect(value("acknowledged") == .int(1))
    }

    @Test("without the analysis: no links, no words, no records; the queue attribution stays")
    func noAnalysis() {
        let run = Self.run(Self.conversation, analysis: false)
        #expect(run.records.isEmpty)
        for (_, pdu) in run.pdus {
            #expect(pdu.annotations.isEmpty)
            #expect(pdu.value("ack") == nil && pdu.value("confirm") == nil && pdu.value("redelivery_of") == nil)
        }
        #expect(run.pdus("basic.ack").contains { $0.pdu.value("queue") == .string("q") })
    }

    @Test("a commit or rollback says what it covered; an unblock and a resumed flow, how long they held back")
    func transactionsAndFlow() throws {
        let run = Self.run([
            (.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 3, Wire.shortstr(""))),        // 1
            (.toClient, Wire.method(20, 11, channel: 3, Wire.longstr(""))),
            (.toServer, Wire.method(90, 10, channel: 3, [])),                                             // 3 tx.select
            (.toServer, Wire.publish(channel: 3, exchange: "", routingKey: "q") + Self.message(channel: 3)),
            (.toServer, Wire.publish(channel: 3, exchange: "", routingKey: "q") + Self.message(channel: 3)),
            (.toServer, Wire.method(90, 20, channel: 3, [])),                                             // 6 tx.commit
            (.toServer, Wire.method(60, 80, channel: 3, Wire.u64(1) + [0])),                              // an ack
            (.toServer, Wire.method(90, 30, channel: 3, [])),                                             // 8 tx.rollback
            (.toClient, Wire.method(10, 60, channel: 0, Wire.shortstr("low on memory"))),                 // 9 blocked
            (.toClient, Wire.method(10, 61, channel: 0, [])),                                             // 10 unblocked
            (.toClient, Wire.method(20, 20, channel: 3, [0])),                                            // 11 flow off
            (.toClient, Wire.method(20, 20, channel: 3, [1])),                                            // 12 flow on
        ])
        let commit = try #require(run.pdus("tx.commit").first)
        #expect(commit.pdu.annotations == ["commits 2 publishes and 0 acknowledgements"])
        #expect(commit.pdu.value("transaction.publishes") == .int(2))
        let rollback = try #require(run.pdus("tx.rollback").first)
        #expect(rollback.pdu.annotations == ["rolls back 0 publishes and 1 acknowledgement"])
        #expect(rollback.pdu.value("transaction.acknowledgements") == .int(1))
        let unblocked = try #require(run.pdus("connection.unblocked").first)
        #expect(unblocked.pdu.annotations == ["resumes the connection's publishers, held since #9 for 1.00 ms"])
        #expect(unblocked.pdu.value("held.duration_us") == .int(1000))
        let resumed = try #require(run.pdus("channel.flow").last)
        #expect(resumed.pdu.value("held.since_frame") == .int(11))
        #expect(resumed.pdu.annotations == ["resumes channel 3's flow, held since #11 for 1.00 ms"])
    }

    @Test("a close names the request it answers, with its frame")
    func closeAnswers() throws {
        let run = Self.run([
            (.toServer, Wire.protocolHeader + Wire.method(20, 10, channel: 1, Wire.shortstr(""))),        // 1
            (.toClient, Wire.method(20, 11, channel: 1, Wire.longstr(""))),
            (.toServer, Wire.method(50, 10, channel: 1, Wire.u16(0) + Wire.shortstr("orders") + [0] + Wire.table([]))),  // 3
            (.toClient, Wire.close(channel: 1, code: 406, text: "PRECONDITION_FAILED - inequivalent arg 'durable'",
                                   failedClass: 50, failedMethod: 10)),                                   // 4
        ])
        let close = try #require(run.pdus("channel.close").first)
        #expect(close.pdu.value("answers.method") == .string("queue.declare"))
        #expect(close.pdu.value("answers.frame") == .int(3))
        #expect(close.pdu.annotations == ["answers queue.declare #3"])
        // With the tree detail, the typed frame carries the broker model's event.
        let event = try #require((close.pdu.packet as? AMQPFrame)?.broker)
        guard case .declareRefused(let entity, let name, let requestFrame, _) = event.kind else {
            Issue.record("not a refused declare: \(event.kind)")
            return
        }
        #expect(entity == "queue" && name == "orders" && requestFrame == 3)
    }

    @Test("a consumer's life: its deliveries, how they were settled, its prefetch and rate, and how it ended")
    func consumerRecord() throws {
        let run = Self.run(Self.conversation)
        let consumers = run.records.filter { $0.kind == .consumer }
        try #require(consumers.count == 1)
        let c = consumers[0]
        func value(_ key: String) -> FieldValue? { c.fields.first { $0.key == key }?.value }
        #expect(c.frames == [12])
        #expect(value("deliveries") == .int(5))
        #expect(value("acknowledged") == .int(3))
        #expect(value("rejected") == .int(1))
        #expect(value("prefetch_count") == .int(1))
        // Five deliveries from the consume-ok (12) to the last (20): 8 ms.
        #expect(value("per_second") == .int(625))
        #expect(c.message.hasSuffix("still consuming when channel 2 closed"))
    }

    @Test("publishers blocked and never unblocked before the connection ended are recorded")
    func stillBlocked() throws {
        let run = Self.run([
            (.toServer, Wire.protocolHeader),                                                             // 1
            (.toClient, Wire.method(10, 60, channel: 0, Wire.shortstr("low on memory"))),                 // 2 blocked
            (.toServer, Wire.heartbeat),                                                                  // 3
        ])
        let held = run.records.filter { $0.kind == .stillBlocked }
        try #require(held.count == 1)
        #expect(held[0].frames == [2])
        #expect(held[0].message == "the broker blocked the connection's publishers at #2 (low on memory) and had not lifted it 1.00 ms later, when the connection ended (the client closed it)")
    }
}
