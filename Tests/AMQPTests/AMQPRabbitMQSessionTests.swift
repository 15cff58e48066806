@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing
import TestSupport

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

/// Indexes of `expectedSummaries` that the client sent.
private let clientSide: Set<Int> = [0, 2, 4, 5, 7, 9, 11, 12, 13, 14, 15, 16, 17, 22, 23, 25, 26, 28, 30, 31, 33, 35, 37]

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

    @Test("started at any offset of the client's stream, the dissector resynchronises and decodes the rest")
    func midStreamAtEveryOffset() {
        let client = rabbitMQSession.filter { $0.0 == .toServer }.flatMap { hexBytes($0.1) }
        let expectedClient = expectedSummaries.enumerated().filter { clientSide.contains($0.offset) }.map(\.element)
        // Every offset through the handshake, then every 5th (inside the 4088-byte body frames too).
        for start in Array(0..<700) + Array(stride(from: 700, to: client.count - 200, by: 5)) {
            let pdus = dissect(Array(client[start...]), midStream: true)
            let frames = pdus.filter { $0.value("frame_type") != .string("unframed") }
            // Whatever was skipped at the start, the frames found are a tail of the real ones.
            #expect(!frames.isEmpty, "start \(start)")
            #expect(Array(expectedClient.suffix(frames.count)) == frames.map(\.summary), "start \(start)")
            #expect(!pdus.contains { $0.problems.contains { $0.severity == .error } }, "start \(start)")
        }
    }

    @Test("gaps at random places never trap, and every whole frame found after them is a real one", arguments: [UInt64(11), 12, 13, 14])
    func randomGaps(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let client = rabbitMQSession.filter { $0.0 == .toServer }.flatMap { hexBytes($0.1) }
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        var i = 0
        while i < client.count {
            let n = Int.random(in: 1...400, using: &rng)
            d.receive(client[i..<min(i + n, client.count)], from: .toServer, into: &out)
            i += n
            let lost = Int.random(in: 1...60, using: &rng)
            d.gap(lost, in: .toServer, into: &out)
            i += lost
        }
        d.finish(.toServer, into: &out)
        let expectedClient = Set(expectedSummaries.enumerated().filter { clientSide.contains($0.offset) }.map(\.element))
        let whole = out.filter { $0.value("frame_type") != .string("unframed") && !$0.summary.hasSuffix("[truncated]") }
        #expect(!whole.isEmpty)
        for pdu in whole {
            #expect(expectedClient.contains(pdu.summary), "\(pdu.summary)")
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
