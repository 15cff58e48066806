@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

/// Client and broker methods of the basic class, as bytes (AMQP 0-9-1 class basic).
private enum Basic {
    static func declareOK(channel: UInt16 = 1, queue: String) -> [UInt8] {
        Wire.method(50, 11, channel: channel, Wire.shortstr(queue) + Wire.u32(0) + Wire.u32(0))
    }

    /// basic.consume: ticket, queue, consumer-tag, bits no-local (0) no-ack (1) exclusive (2) nowait (3), arguments.
    static func consume(channel: UInt16 = 1, queue: String, tag: String = "", noAck: Bool = false) -> [UInt8] {
        Wire.method(60, 20, channel: channel, Wire.u16(0) + Wire.shortstr(queue) + Wire.shortstr(tag)
            + [noAck ? 0b0000_0010 : 0] + Wire.table([]))
    }

    static func consumeOK(channel: UInt16 = 1, tag: String) -> [UInt8] {
        Wire.method(60, 21, channel: channel, Wire.shortstr(tag))
    }

    /// basic.deliver (consumer-tag, delivery-tag, redelivered, exchange, routing-key) with an empty message.
    static func deliver(channel: UInt16 = 1, tag: String, deliveryTag: UInt64) -> [UInt8] {
        Wire.method(60, 60, channel: channel, Wire.shortstr(tag) + Wire.u64(deliveryTag) + [0] + Wire.shortstr("") + Wire.shortstr("rk"))
            + Wire.contentHeader(channel: channel, bodySize: 0)
    }

    /// basic.get: ticket, queue, no-ack.
    static func get(channel: UInt16 = 1, queue: String, noAck: Bool = false) -> [UInt8] {
        Wire.method(60, 70, channel: channel, Wire.u16(0) + Wire.shortstr(queue) + [noAck ? 1 : 0])
    }

    /// basic.get-ok (delivery-tag, redelivered, exchange, routing-key, message-count) with an empty message.
    static func getOK(channel: UInt16 = 1, deliveryTag: UInt64) -> [UInt8] {
        Wire.method(60, 71, channel: channel, Wire.u64(deliveryTag) + [0] + Wire.shortstr("") + Wire.shortstr("rk") + Wire.u32(0))
            + Wire.contentHeader(channel: channel, bodySize: 0)
    }

    static func ack(channel: UInt16 = 1, _ deliveryTag: UInt64, multiple: Bool = false) -> [UInt8] {
        Wire.method(60, 80, channel: channel, Wire.u64(deliveryTag) + [multiple ? 1 : 0])
    }

    /// basic.nack: delivery-tag, bits multiple (0) requeue (1).
    static func nack(channel: UInt16 = 1, _ deliveryTag: UInt64, multiple: Bool = false) -> [UInt8] {
        Wire.method(60, 120, channel: channel, Wire.u64(deliveryTag) + [(multiple ? 1 : 0) | 0b10])
    }

    /// basic.reject: delivery-tag, requeue.
    static func reject(channel: UInt16 = 1, _ deliveryTag: UInt64) -> [UInt8] {
        Wire.method(60, 90, channel: channel, Wire.u64(deliveryTag) + [0])
    }
}

/// One connection fed step by step; each step returns the PDUs it produced.
private struct Session {
    var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672),
                                            options: AMQPOptions())

    init(channel: UInt16 = 1) {
        _ = send(.toServer, Wire.protocolHeader)
        _ = send(.toServer, Wire.method(20, 10, channel: channel, Wire.shortstr("")))
        _ = send(.toClient, Wire.method(20, 11, channel: channel, Wire.longstr("")))
    }

    mutating func send(_ direction: Direction, _ bytes: [UInt8]) -> [DissectedPDU] {
        var out: [DissectedPDU] = []
        dissector.receive(bytes[...], from: direction, into: &out)
        return out
    }

    /// The root `queue` field of the first PDU the step produced.
    mutating func queue(_ direction: Direction, _ bytes: [UInt8]) -> String? {
        rootField("queue", send(direction, bytes).first)?.value.stringValue
    }
}

private func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = hex.startIndex
    while i < hex.endIndex, let next = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) {
        out.append(UInt8(hex[i..<next], radix: 16) ?? 0)
        i = next
    }
    return out
}

private func rootField(_ key: String, _ pdu: DissectedPDU?) -> Field? {
    pdu?.fields.first { $0.key == key }
}

@Suite("AMQP queue attribution")
struct AMQPQueueTrackingTests {
    @Test("a delivery is attributed to the queue its consumer tag consumes from, and so is the client's ack of it")
    func deliverAndAck() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "orders"))
        _ = s.send(.toClient, Basic.consumeOK(tag: "amq.ctag-1"))
        let delivered = s.send(.toClient, Basic.deliver(tag: "amq.ctag-1", deliveryTag: 1))
        #expect(rootField("queue", delivered.first)?.value == .string("orders"))
        #expect(rootField("queue", delivered.first)?.label == "Queue (from basic.consume)")
        #expect(delivered.allSatisfy { $0.problems.isEmpty })
        let acked = s.send(.toServer, Basic.ack(1))
        #expect(rootField("queue", acked.first)?.value == .string("orders"))
        #expect(rootField("queue", acked.first)?.label == "Queue (from delivery-tag 1)")
        #expect(rootField("acked_count", acked.first) == nil)
        // Settled: a second ack of the same tag is not attributed.
        #expect(s.queue(.toServer, Basic.ack(1)) == nil)
    }

    @Test("a consumer tag chosen by the client counts without waiting for consume-ok")
    func clientChosenTag() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "jobs", tag: "worker-1"))
        #expect(s.queue(.toClient, Basic.deliver(tag: "worker-1", deliveryTag: 1)) == "jobs")
    }

    @Test("a consumer tag taken again names its new queue, not the one its last delivery came from")
    func tagTakenAgain() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "old", tag: "c1"))
        #expect(s.queue(.toClient, Basic.deliver(tag: "c1", deliveryTag: 1)) == "old")
        // basic.cancel-ok, then the same tag consuming from another queue.
        _ = s.send(.toClient, Wire.method(60, 31, channel: 1, Wire.shortstr("c1")))
        #expect(s.queue(.toClient, Basic.deliver(tag: "c1", deliveryTag: 2)) == nil)
        _ = s.send(.toServer, Basic.consume(queue: "new", tag: "c1"))
        #expect(s.queue(.toClient, Basic.deliver(tag: "c1", deliveryTag: 3)) == "new")
        #expect(s.queue(.toServer, Basic.ack(3)) == "new")
    }

    @Test("a consume with an empty queue name consumes from the channel's last declared queue")
    func emptyQueueNameMeansLastDeclared() {
        var s = Session()
        _ = s.send(.toServer, Wire.method(50, 10, channel: 1, Wire.u16(0) + Wire.shortstr("") + [0b0000_1000] + Wire.table([])))
        _ = s.send(.toClient, Basic.declareOK(queue: "amq.gen-Xa2"))
        _ = s.send(.toServer, Basic.consume(queue: ""))
        _ = s.send(.toClient, Basic.consumeOK(tag: "amq.ctag-7"))
        #expect(s.queue(.toClient, Basic.deliver(tag: "amq.ctag-7", deliveryTag: 1)) == "amq.gen-Xa2")
        #expect(s.queue(.toServer, Basic.reject(1)) == "amq.gen-Xa2")
    }

    @Test("basic.get-ok is attributed to the pending basic.get's queue, and its ack too")
    func getOK() {
        var s = Session()
        _ = s.send(.toServer, Basic.get(queue: "invoices"))
        let got = s.send(.toClient, Basic.getOK(deliveryTag: 4))
        #expect(rootField("queue", got.first)?.value == .string("invoices"))
        #expect(rootField("queue", got.first)?.label == "Queue (from basic.get)")
        #expect(s.queue(.toServer, Basic.ack(4)) == "invoices")
    }

    @Test("acks, nacks and rejects on a channel with two consumers go to each delivery's own queue")
    func twoConsumers() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "a", tag: "ca"))
        _ = s.send(.toServer, Basic.consume(queue: "b", tag: "cb"))
        _ = s.send(.toClient, Basic.deliver(tag: "ca", deliveryTag: 1))
        _ = s.send(.toClient, Basic.deliver(tag: "cb", deliveryTag: 2))
        _ = s.send(.toClient, Basic.deliver(tag: "ca", deliveryTag: 3))
        #expect(s.queue(.toServer, Basic.nack(2)) == "b")
        #expect(s.queue(.toServer, Basic.reject(3)) == "a")
        #expect(s.queue(.toServer, Basic.ack(1)) == "a")
    }

    @Test("a multiple ack is attributed to its tag's queue and counts the outstanding deliveries it covers")
    func multipleAck() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "orders", tag: "c1"))
        for tag: UInt64 in 1...5 { _ = s.send(.toClient, Basic.deliver(tag: "c1", deliveryTag: tag)) }
        _ = s.send(.toServer, Basic.ack(2))
        let acked = s.send(.toServer, Basic.ack(4, multiple: true)).first
        #expect(rootField("queue", acked)?.value == .string("orders"))
        #expect(rootField("acked_count", acked)?.value == .int(3)) // 1, 3 and 4; 2 was acked before
        let nacked = s.send(.toServer, Basic.nack(0, multiple: true)).first // tag 0: everything outstanding, here 5
        #expect(rootField("queue", nacked)?.value == .string("orders"))
        #expect(rootField("acked_count", nacked)?.value == .int(1))
    }

    @Test("publisher confirms from the broker and acks of no-ack deliveries are not attributed to a queue")
    func notClientAcks() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "fast", tag: "c1", noAck: true))
        #expect(s.queue(.toClient, Basic.deliver(tag: "c1", deliveryTag: 1)) == "fast")
        #expect(s.queue(.toServer, Basic.ack(1)) == nil)
        _ = s.send(.toServer, Basic.consume(queue: "slow", tag: "c2"))
        _ = s.send(.toClient, Basic.deliver(tag: "c2", deliveryTag: 2))
        #expect(s.queue(.toClient, Basic.ack(2)) == nil)
    }

    @Test("reopening a channel forgets its consumers and deliveries")
    func channelReopen() {
        var s = Session()
        _ = s.send(.toServer, Basic.consume(queue: "orders", tag: "c1"))
        _ = s.send(.toClient, Basic.deliver(tag: "c1", deliveryTag: 1))
        _ = s.send(.toServer, Wire.close(channel: 1, code: 200, text: "bye", failedClass: 0, failedMethod: 0))
        _ = s.send(.toClient, Wire.method(20, 41, channel: 1, []))
        _ = s.send(.toServer, Wire.method(20, 10, channel: 1, Wire.shortstr("")))
        #expect(s.queue(.toServer, Basic.ack(1)) == nil)
        #expect(s.queue(.toClient, Basic.deliver(tag: "c1", deliveryTag: 1)) == nil)
    }

    @Test("connection.start-ok gets the client's product, version and platform; connection.open its vhost, JSON only")
    func clientProperties() {
        var s = Session(channel: 1)
        let startOK = s.send(.toServer, Wire.method(10, 11, channel: 0,
            Wire.table([("product", [0x53] + Wire.longstr("Pika Python Client Library")),
                        ("platform", [0x53] + Wire.longstr("Python 3.11.7")),
                        ("version", [0x53] + Wire.longstr("1.3.2"))])
            + Wire.shortstr("PLAIN") + Wire.longstr([0] + Array("app".utf8) + [0] + Array("pw".utf8)) + Wire.shortstr("en_US"))).first
        #expect(rootField("client_product", startOK)?.value == .string("Pika Python Client Library"))
        #expect(rootField("client_version", startOK)?.value == .string("1.3.2"))
        #expect(rootField("client_platform", startOK)?.value == .string("Python 3.11.7"))
        #expect(rootField("client_product", startOK)?.jsonOnly == true)
        #expect(rootField("sasl_user", startOK)?.value == .string("app"))
        let open = s.send(.toServer, Wire.method(10, 40, channel: 0, Wire.shortstr("prod") + Wire.shortstr("") + [0])).first
        #expect(rootField("vhost", open)?.value == .string("prod"))
        #expect(rootField("vhost", open)?.jsonOnly == true)
    }

    @Test("a start-ok whose client-properties lack the product has no client fields")
    func noClientProperties() {
        var s = Session()
        let startOK = s.send(.toServer, Wire.method(10, 11, channel: 0,
            Wire.table([("information", [0x53] + Wire.longstr("x"))]) + Wire.shortstr("PLAIN")
            + Wire.longstr([0] + Array("u".utf8) + [0] + Array("p".utf8)) + Wire.shortstr("en_US"))).first
        #expect(startOK?.summary.hasPrefix("connection.start-ok") == true)
        #expect(rootField("client_product", startOK) == nil)
        #expect(rootField("client_version", startOK) == nil)
    }

    @Test("in the real RabbitMQ session, basic.get-ok and the ack are attributed to queue orders")
    func realSession() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        for (direction, hex) in rabbitMQSession {
            d.receive(bytes(hex: hex)[...], from: direction, into: &out)
        }
        let attributed = out.compactMap { pdu in rootField("queue", pdu).map { (pdu.summary.split(separator: " ")[0], $0.value) } }
        #expect(attributed.map { String($0.0) } == ["basic.get-ok", "basic.ack"])
        #expect(attributed.allSatisfy { $0.1 == .string("orders") })
        let startOK = out.first { $0.summary.hasPrefix("connection.start-ok") }
        #expect(rootField("client_product", startOK)?.value == .string("Pika Python Client Library"))
        #expect(rootField("client_version", startOK)?.value == .string("1.3.2"))
        #expect(rootField("vhost", out.first { $0.summary.hasPrefix("connection.open ") })?.value == .string("/"))
    }
}
