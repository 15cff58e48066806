@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing
import TestSupport

/// A whole, well-behaved connection as RabbitMQ and a client exchange it, one step per entry.
private let conversation: [(Direction, [UInt8])] = [
    (.toServer, Wire.protocolHeader),
    (.toClient, Wire.method(10, 10, channel: 0,
        [0, 9]                                                            // version 0-9
        + Wire.table([("product", [0x53] + Wire.longstr("RabbitMQ")),
                      ("capabilities", [0x46] + Wire.table([("publisher_confirms", [0x74, 1]),
                                                            ("consumer_cancel_notify", [0x74, 1])]))])
        + Wire.longstr("AMQPLAIN PLAIN") + Wire.longstr("en_US"))),
    (.toServer, Wire.method(10, 11, channel: 0,
        Wire.table([("product", [0x53] + Wire.longstr("test"))]) + Wire.shortstr("PLAIN")
        + Wire.longstr([0] + Array("guest".utf8) + [0] + Array("guest".utf8)) + Wire.shortstr("en_US"))),
    (.toClient, Wire.tune(30, channelMax: 2047, frameMax: 131_072, heartbeat: 60)),
    (.toServer, Wire.tune(31, channelMax: 2047, frameMax: 131_072, heartbeat: 60)),
    (.toServer, Wire.method(10, 40, channel: 0, Wire.shortstr("/") + Wire.shortstr("") + [0])),
    (.toClient, Wire.method(10, 41, channel: 0, Wire.shortstr(""))),
    (.toServer, Wire.method(20, 10, channel: 1, Wire.shortstr(""))),
    (.toClient, Wire.method(20, 11, channel: 1, Wire.longstr(""))),
    (.toServer, Wire.method(50, 10, channel: 1, Wire.u16(0) + Wire.shortstr("orders") + [0b0000_0010]
        + Wire.table([("x-message-ttl", [0x49] + Wire.u32(60_000))]))),
    (.toClient, Wire.method(50, 11, channel: 1, Wire.shortstr("orders") + Wire.u32(0) + Wire.u32(0))),
    (.toServer, Wire.publish(channel: 1, exchange: "", routingKey: "orders")
        + Wire.contentHeader(channel: 1, bodySize: 11, flags: 0x9000, properties: Wire.shortstr("application/json") + [2])
        + Wire.body(channel: 1, "{\"id\": 42}\n")),
    (.toServer, Wire.method(60, 20, channel: 1, Wire.u16(0) + Wire.shortstr("orders") + Wire.shortstr("") + [0] + Wire.table([]))),
    (.toClient, Wire.method(60, 21, channel: 1, Wire.shortstr("amq.ctag-1"))),
    (.toClient, Wire.method(60, 60, channel: 1, Wire.shortstr("amq.ctag-1") + Wire.u64(1) + [0] + Wire.shortstr("") + Wire.shortstr("orders"))
        + Wire.contentHeader(channel: 1, bodySize: 11, flags: 0x9000, properties: Wire.shortstr("application/json") + [2])
        + Wire.body(channel: 1, "{\"id\": 42}\n")),
    (.toServer, Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])),
    (.toServer, Wire.heartbeat),
    (.toClient, Wire.heartbeat),
    (.toServer, Wire.close(channel: 1, code: 200, text: "Normal shutdown", failedClass: 0, failedMethod: 0)),
    (.toClient, Wire.method(20, 41, channel: 1, [])),
    (.toServer, Wire.close(classID: 10, methodID: 50, channel: 0, code: 200, text: "Normal shutdown", failedClass: 0, failedMethod: 0)),
    (.toClient, Wire.method(10, 51, channel: 0, [])),
]

@Suite("AMQP conversation")
struct AMQPConversationTests {
    @Test("a well-behaved connection decodes with no problem at all")
    func wellBehaved() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        for (direction, bytes) in conversation {
            d.receive(bytes[...], from: direction, into: &out)
        }
        d.finish(.toServer, into: &out)
        d.finish(.toClient, into: &out)
        #expect(out.count == 26)
        for pdu in out {
            #expect(pdu.problems.isEmpty, "\(pdu.summary): \(pdu.problems.map(\.description))")
        }
        #expect(out[1].summary == "connection.start version-major=0 version-minor=9 mechanisms=\"AMQPLAIN PLAIN\" locales=en_US")
        #expect(out[1].value("arguments.server_properties.capabilities.publisher_confirms") == .bool(true))
        let delivered = out.first { $0.value("message.method") == .string("basic.deliver") }
        #expect(delivered?.value("message.routing_key") == .string("orders"))
        #expect(delivered?.value("message.properties") == .string("content-type=application/json delivery-mode=2"))
        #expect(delivered?.value("message.body") == .text(preview: "{\"id\": 42}\n", length: 11))
        #expect(out.last?.summary == "connection.close-ok")
    }

    @Test("the same connection fed byte by byte gives the same PDUs")
    func byteByByte() {
        func run(_ step: Int) -> [String] {
            var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
            var out: [DissectedPDU] = []
            for (direction, bytes) in conversation {
                var i = 0
                while i < bytes.count {
                    d.receive(bytes[i..<min(i + step, bytes.count)], from: direction, into: &out)
                    i += step
                }
            }
            return out.map { "\($0.summary) \($0.wireLength) \($0.problems.map(\.code.rawValue))" }
        }
        let whole = run(Int.max / 2)
        #expect(run(1) == whole)
        #expect(run(7) == whole)
    }

    @Test("a method on a channel that was never opened is a problem")
    func channelNotOpen() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions())
        var out: [DissectedPDU] = []
        d.receive((Wire.protocolHeader + Wire.publish(channel: 5, exchange: "", routingKey: "q"))[...], from: .toServer, into: &out)
        #expect(out.last?.has("channel-not-open") == true)
    }

    @Test("connection.blocked is explained")
    func blocked() {
        let pdu = AMQPDecoder.decode(frame: Wire.method(10, 60, channel: 0, Wire.shortstr("low on memory"))[...])
        #expect(pdu.summary == "connection.blocked reason=\"low on memory\"")
        #expect(pdu.value("explanation")?.stringValue?.contains("resource alarm is in effect (low on memory)") == true)
    }

    @Test("an unknown frame type loses sync; the next frame is found and the skipped bytes counted")
    func unknownFrameType() {
        let pdus = AMQPDecoder.decodeAll([0x09, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0xCE] + Wire.heartbeat)
        #expect(pdus.count == 1)
        #expect(pdus[0].summary == "heartbeat")
        #expect(pdus[0].has("unknown-frame-type"))
        #expect(pdus[0].problems.first { $0.code == "resync-skipped" }?.message == "skipped 8 bytes to find the next frame boundary")
    }

    @Test("decoding one frame reports bytes after it")
    func trailingBytes() {
        let pdu = AMQPDecoder.decode(frame: (Wire.heartbeat + Wire.heartbeat)[...])
        #expect(pdu.summary == "heartbeat")
        #expect(pdu.has("trailing-bytes"))
        let cut = AMQPDecoder.decode(frame: Wire.heartbeat[..<5])
        #expect(cut.value("frame_type") == .string("unframed"))
    }

    @Test("random arguments for every method never trap", arguments: AMQPSpec.allMethods)
    func randomArguments(spec: AMQPMethodSpec) {
        var rng = SplitMix64(seed: UInt64(spec.classID) << 16 | UInt64(spec.methodID))
        for _ in 0..<50 {
            let count = Int.random(in: 0..<80, using: &rng)
            let args = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let pdu = AMQPDecoder.decode(frame: Wire.method(spec.classID, spec.methodID, channel: 1, args)[...])
            #expect(pdu.value("method") == .string(spec.fullName))
        }
    }
}
