@testable import AMQP
import Dissection
import Testing

private func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var high: UInt8?
    for c in hex.utf8 {
        let v: UInt8 = c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10
        if let h = high {
            out.append(h << 4 | v)
            high = nil
        } else {
            high = v
        }
    }
    return out
}

private func runSession(step: Int = Int.max) -> [DissectedPDU] {
    var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
    var out: [DissectedPDU] = []
    for (direction, hex) in rabbitMQSession {
        let bytes = hexBytes(hex)
        var i = 0
        while i < bytes.count {
            let end = step >= bytes.count - i ? bytes.count : i + step
            d.receive(bytes[i..<end], from: direction, into: &out)
            i = end
        }
    }
    d.finish(.toServer, into: &out)
    d.finish(.toClient, into: &out)
    return out
}

private let expectedSummaries = [
    "protocol header AMQP 0-9-1",
    "connection.start version-major=0 version-minor=9 mechanisms=\"PLAIN AMQPLAIN\" locales=en_US",
    "connection.start-ok mechanism=PLAIN user=guest",
    "connection.tune channel-max=2047 frame-max=131072 heartbeat=60",
    "connection.tune-ok channel-max=2047 frame-max=4096 heartbeat=60",
    "connection.open virtual-host=/ insist",
    "connection.open-ok",
    "channel.open",
    "channel.open-ok",
    "queue.declare queue=orders durable",
    "queue.declare-ok queue=orders message-count=0 consumer-count=0",
    "basic.publish routing-key=orders",
    "content header basic body-size=6000 content-type=text/plain headers=4 delivery-mode=2 message-id=m-1",
    "body 4088 bytes \"order-order-order-order-order-order-orde...\"",
    "body 1912 bytes \"der-order-order-order-order-order-order-...\"",
    "basic.publish routing-key=orders",
    "content header basic body-size=0",
    "basic.get queue=orders",
    "basic.get-ok delivery-tag=1 routing-key=orders message-count=1",
    "content header basic body-size=6000 content-type=text/plain headers=4 delivery-mode=2 message-id=m-1",
    "body 4088 bytes \"order-order-order-order-order-order-orde...\"",
    "body 1912 bytes \"der-order-order-order-order-order-order-...\"",
    "basic.ack delivery-tag=1",
    "queue.declare queue=orders",
    "channel.close 406 PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'orders' in vhost '/': received 'false' b... (queue.declare)",
    "channel.close-ok",
    "channel.open",
    "channel.open-ok",
    "queue.declare queue=missing passive",
    "channel.close 404 NOT_FOUND - no queue 'missing' in vhost '/' (queue.declare)",
    "channel.close-ok",
    "channel.open",
    "channel.open-ok",
    "queue.delete queue=orders",
    "queue.delete-ok message-count=1",
    "channel.close 0 Normal shutdown",
    "channel.close-ok",
    "connection.close 200 Normal shutdown",
    "connection.close-ok",
]

@Suite("AMQP against a real RabbitMQ session")
struct AMQPRabbitMQSessionTests {
    @Test("a real pika/RabbitMQ session decodes frame by frame without a problem", arguments: [Int.max, 1, 100])
    func summaries(step: Int) {
        let pdus = runSession(step: step)
        #expect(pdus.map(\.summary) == expectedSummaries)
        for pdu in pdus {
            #expect(pdu.problems.isEmpty, "\(pdu.summary): \(pdu.problems.map(\.description))")
        }
    }

    @Test("the real session's messages, secrets and closes are explained")
    func details() {
        let pdus = runSession()
        #expect(pdus[2].value("arguments.response") == .secret("\\0guest\\0guest"))
        #expect(pdus[12].field("x-l")?.children.map(\.value) == [.int(1), .text(preview: "a", length: 1)])
        #expect(pdus[12].value("properties.headers.x-t.k") == .bool(true))
        #expect(pdus[12].value("properties.headers.x-d") == .string("1.5"))
        let published = pdus[14]
        #expect(published.value("message.body_size") == .int(6000))
        #expect(published.value("message.body_frames") == .int(2))
        #expect(published.value("message.body") == .text(preview: String(String(repeating: "order-", count: 43).prefix(256)), length: 6000))
        #expect(pdus[16].value("message.body_size") == .int(0))
        #expect(pdus[21].value("message.method") == .string("basic.get-ok"))
        #expect(pdus[24].value("explanation")?.stringValue?.hasPrefix("The queue 'orders' already exists in vhost '/' with durable=true") == true)
        #expect(pdus[29].value("explanation")?.stringValue?.contains("A passive queue.declare only checks for an existing queue") == true)
    }
}
