import AMQP

/// Synthetic captures that reach the JSON keys the sample captures do not (`JSONSchemaTests`):
/// every MQTT 5.0 property, lists longer than the JSON shows, reserved and left-over bytes, every
/// AMQP 0-9-1 method with every argument, every content property, the rarer frames, and stream
/// and capture events. The samples stay real traffic (samples/README.md); these are made here.
enum SchemaCoverageCaptures {
    /// Each capture as a name and its pcap bytes.
    static var all: [(name: String, bytes: [UInt8])] {
        [("schema-mqtt5", mqtt5().bytes), ("schema-amqp", amqp().bytes), ("schema-amqp-analysis", amqpAnalysis().bytes),
         ("schema-events", events().bytes), ("schema-link-type", unsupportedLinkType()), ("schema-mid-flow", midFlow().bytes)]
    }

    // MARK: - MQTT 5.0

    private static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func string(_ s: String) -> [UInt8] { MQTTBytes.string(s) }
    private static func binary(_ b: [UInt8]) -> [UInt8] { u16(b.count) + b }
    private static func vbi(_ n: Int) -> [UInt8] { MQTTBytes.remainingLength(n) }
    /// A property list: its variable-byte length, then the properties.
    private static func properties(_ p: [[UInt8]]) -> [UInt8] { vbi(p.joined().count) + Array(p.joined()) }
    private static func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] { [first] + vbi(body.count) + body }

    /// MQTT 5.0 properties by identifier (MQTT 5.0 §2.2.2.2), each with a value of its type.
    private enum P {
        static let payloadFormat: [UInt8] = [0x01, 0]
        static let messageExpiry: [UInt8] = [0x02] + u32(60)
        static let contentType: [UInt8] = [0x03] + string("text/plain")
        static let responseTopic: [UInt8] = [0x08] + string("replies/schema")
        static let correlationData: [UInt8] = [0x09] + binary([0xC0, 0xFF, 0xEE])
        static let subscriptionID: [UInt8] = [0x0B] + vbi(7)
        static let sessionExpiry: [UInt8] = [0x11] + u32(3600)
        static let assignedClientID: [UInt8] = [0x12] + string("auto-schema")
        static let serverKeepAlive: [UInt8] = [0x13] + u16(30)
        static let authMethod: [UInt8] = [0x15] + string("SCRAM-SHA-1")
        static let authData: [UInt8] = [0x16] + binary([0x00, 0x01, 0xFF])
        static let requestProblem: [UInt8] = [0x17, 1]
        static let willDelay: [UInt8] = [0x18] + u32(5)
        static let requestResponse: [UInt8] = [0x19, 1]
        static let responseInfo: [UInt8] = [0x1A] + string("replies/")
        static let serverReference: [UInt8] = [0x1C] + string("other.example:1883")
        static let reasonString: [UInt8] = [0x1F] + string("because")
        static let receiveMaximum: [UInt8] = [0x21] + u16(10)
        static let topicAliasMaximum: [UInt8] = [0x22] + u16(10)
        static let topicAlias: [UInt8] = [0x23] + u16(1)
        static let maximumQoS: [UInt8] = [0x24, 1]
        static let retainAvailable: [UInt8] = [0x25, 1]
        static let userProperty: [UInt8] = [0x26] + string("k") + string("v")
        static let maximumPacketSize: [UInt8] = [0x27] + u32(65536)
        static let wildcardAvailable: [UInt8] = [0x28, 1]
        static let subscriptionIDAvailable: [UInt8] = [0x29, 1]
        static let sharedAvailable: [UInt8] = [0x2A, 1]
    }

    /// More filters and codes than the JSON lists (256), so the counts of those not shown appear.
    private static let listed = 257

    static func mqtt5() -> SyntheticCapture {
        var c = SyntheticCapture(clientPort: 50_100, serverPort: 1883)
        c.handshake()
        // CONNECT: user name, password, will (QoS 1, retained), clean start; every CONNECT property.
        let connect = string("MQTT") + [5, 0xEE] + u16(60)
            + properties([P.sessionExpiry, P.receiveMaximum, P.maximumPacketSize, P.topicAliasMaximum, P.requestResponse,
                          P.requestProblem, P.userProperty, P.authMethod, P.authData])
            + string("schema")
            + properties([P.willDelay, P.payloadFormat, P.messageExpiry, P.contentType, P.responseTopic, P.correlationData,
                          P.userProperty])
            + string("wills/schema") + binary([0xFF, 0x00, 0x01])  // a will payload that is not text
            + string("user") + binary(Array("pass".utf8))
        c.send(toServer: true, packet(0x10, connect))
        // CONNACK: accepted; every CONNACK property.
        c.send(toServer: false, packet(0x20, [0x00, 0x00] + properties([
            P.sessionExpiry, P.receiveMaximum, P.maximumQoS, P.retainAvailable, P.maximumPacketSize, P.assignedClientID,
            P.topicAliasMaximum, P.reasonString, P.userProperty, P.wildcardAvailable, P.subscriptionIDAvailable,
            P.sharedAvailable, P.serverKeepAlive, P.responseInfo, P.serverReference, P.authMethod, P.authData])))
        // AUTH: continue authentication (0x18).
        c.send(toServer: true, packet(0xF0, [0x18] + properties([P.authMethod, P.authData, P.reasonString, P.userProperty])))
        // SUBSCRIBE and UNSUBSCRIBE with more filters than are listed, and their acknowledgements.
        let filters = (0..<listed).map { "schema/\($0)" }
        c.send(toServer: true, packet(0x82, u16(1) + properties([P.subscriptionID, P.userProperty])
            + filters.flatMap { string($0) + [0x01] }))
        c.send(toServer: false, packet(0x90, u16(1) + properties([P.reasonString]) + [UInt8](repeating: 0x01, count: listed)))
        c.send(toServer: true, packet(0xA2, u16(2) + properties([]) + filters.flatMap { string($0) }))
        c.send(toServer: false, packet(0xB0, u16(2) + properties([]) + [UInt8](repeating: 0x00, count: listed)))
        // PUBLISH QoS 1 with every PUBLISH property and a payload that is not text; its PUBACK.
        c.send(toServer: false, packet(0x32, string("schema/1") + u16(3) + properties([
            P.payloadFormat, P.messageExpiry, P.contentType, P.responseTopic, P.correlationData, P.subscriptionID,
            P.topicAlias, P.userProperty]) + [0xFF, 0xFE]))
        c.send(toServer: true, packet(0x40, u16(3) + [0x10] + properties([P.reasonString, P.userProperty])))
        // PINGREQ whose remaining length covers two bytes it has no use for.
        c.send(toServer: true, [0xC0, 0x02, 0xAB, 0xCD])
        // A packet of reserved type 0 with a body.
        c.send(toServer: true, [0x00, 0x02, 0xAA, 0xBB])
        // DISCONNECT from the server: a reason code and properties.
        c.send(toServer: false, packet(0xE0, [0x8B] + properties([P.reasonString, P.serverReference, P.userProperty])))
        // The client's last bytes are a fixed header cut short: skipped, counted at the end.
        c.send(toServer: true, [0x30, 0xFF])
        c.close()
        return c
    }

    // MARK: - AMQP 0-9-1

    private enum Wire {
        static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        static func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        static func u64(_ v: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }
        static func shortstr(_ s: String) -> [UInt8] { [UInt8(s.utf8.count)] + Array(s.utf8) }
        static func longstr(_ b: [UInt8]) -> [UInt8] { u32(b.count) + b }
        /// A field table of one entry, `k` = true.
        static let table: [UInt8] = u32(4) + [1, UInt8(ascii: "k"), UInt8(ascii: "t"), 1]
        static func frame(_ type: UInt8, channel: Int, _ payload: [UInt8]) -> [UInt8] {
            [type] + u16(channel) + u32(payload.count) + payload + [0xCE]
        }
    }

    /// A method's arguments, each a value of its type: bits set (so each shows), numbers that keep
    /// the connection's limits open, binary long strings (shown as hex), a table of one entry.
    /// A close names a reply code and a failed method, so their names show.
    private static func arguments(of method: AMQPMethodSpec) -> [UInt8] {
        var out: [UInt8] = []
        var bits: UInt8 = 0, bitCount = 0
        func flushBits() {
            if bitCount > 0 { out.append(bits) }
            bits = 0
            bitCount = 0
        }
        for arg in method.arguments {
            if arg.type == .bit {
                if bitCount == 8 { flushBits() }
                bits |= 1 << UInt8(bitCount)
                bitCount += 1
                continue
            }
            flushBits()
            switch (arg.type, arg.name) {
            case (.short, "reply-code"): out += Wire.u16(404)     // NOT_FOUND
            case (.short, "class-id"): out += Wire.u16(50)        // queue.declare
            case (.short, "method-id"): out += Wire.u16(10)
            case (.short, "channel-max"): out += Wire.u16(2047)
            case (.short, "heartbeat"): out += Wire.u16(60)
            case (.long, "frame-max"): out += Wire.u32(131_072)
            case (.octet, _): out.append(0)
            case (.short, _): out += Wire.u16(0)
            case (.long, _): out += Wire.u32(0)
            case (.longlong, _), (.timestamp, _): out += Wire.u64(1)
            case (.shortstr, _): out += Wire.shortstr("x")
            case (.longstr, _): out += Wire.longstr([0xFF, 0xFE])
            case (.table, _): out += Wire.table
            case (.bit, _): break
            }
        }
        flushBits()
        return out
    }

    /// A content header of class basic with all 14 properties (flags 0xFFFC).
    private static func fullHeader(channel: Int, bodySize: Int) -> [UInt8] {
        let properties = Wire.shortstr("text/plain") + Wire.shortstr("gzip") + Wire.table + [2, 5]
            + Wire.shortstr("corr") + Wire.shortstr("reply") + Wire.shortstr("60000") + Wire.shortstr("id")
            + Wire.u64(1_700_000_000) + Wire.shortstr("type") + Wire.shortstr("guest") + Wire.shortstr("app")
            + Wire.shortstr("cluster")
        return Wire.frame(2, channel: channel, Wire.u16(60) + Wire.u16(0) + Wire.u64(bodySize) + Wire.u16(0xFFFC) + properties)
    }

    static func amqp() -> SyntheticCapture {
        var c = SyntheticCapture(clientPort: 50_200, serverPort: 5672)
        c.handshake()
        c.send(toServer: true, Array("AMQP".utf8) + [0, 0, 9, 1])
        let methods = AMQPSpec.allMethods
        // Closes last: a channel.close-ok ends the channel the rest use.
        let isClose = { (m: AMQPMethodSpec) in m.methodName == "close" || m.methodName == "close-ok" }
        let open = methods.first { $0.className == "channel" && $0.methodName == "open" }!
        for method in [open] + methods.filter({ $0 !== open && !isClose($0) }) + methods.filter(isClose) {
            let channel = method.classID == 10 ? 0 : 1
            let payload = Wire.u16(Int(method.classID)) + Wire.u16(Int(method.methodID)) + arguments(of: method)
            c.send(toServer: true, Wire.frame(1, channel: channel, payload))
            guard method.carriesContent else { continue }
            // Its message: every property, a body that is not text.
            c.send(toServer: true, fullHeader(channel: channel, bodySize: 2) + Wire.frame(3, channel: channel, [0xFF, 0xFE]))
        }
        // A content header whose property flags continue into a second word.
        c.send(toServer: true, Wire.frame(1, channel: 2, Wire.u16(60) + Wire.u16(40) + Wire.u16(0) + Wire.shortstr("")
            + Wire.shortstr("k") + [0]))
        c.send(toServer: true, Wire.frame(2, channel: 2, Wire.u16(60) + Wire.u16(0) + Wire.u64(0) + Wire.u16(0x0001) + Wire.u16(0x0000)))
        // A heartbeat, and a method no class defines.
        c.send(toServer: true, Wire.frame(8, channel: 0, []))
        c.send(toServer: true, Wire.frame(1, channel: 2, Wire.u16(99) + Wire.u16(1) + [0xFF, 0x00]))
        // A message whose body frame the snapshot length cuts: its preview is incomplete.
        c.send(toServer: true, Wire.frame(1, channel: 3, Wire.u16(60) + Wire.u16(40) + Wire.u16(0) + Wire.shortstr("")
            + Wire.shortstr("k") + [0]))
        c.send(toServer: true, Wire.frame(2, channel: 3, Wire.u16(60) + Wire.u16(0) + Wire.u64(100) + Wire.u16(0)))
        c.packet(toServer: true, flags: 0x18, payload: Wire.frame(3, channel: 3, [UInt8](repeating: 0x61, count: 100)), capture: 20 + 20 + 30)
        // A frame of a type 0-9-1 does not define: the framer loses frame sync at it (so its
        // bytes are unframed, and `amqp.payload` stays a library user's).
        c.send(toServer: true, Wire.frame(5, channel: 2, [0xFF]))
        c.close()
        return c
    }

    /// One AMQP connection whose acknowledgements and confirms the analysis follows: a
    /// publisher in confirm mode (two publishes confirmed by one `multiple` ack, one left
    /// unconfirmed at the end), a consumer with a prefetch of 1 (an ack, a nack with requeue,
    /// the redelivery, a `multiple` ack, and a delivery left unacknowledged when its channel closes),
    /// and a channel with a global prefetch of 1 and a consumer from before the capture.
    static func amqpAnalysis() -> SyntheticCapture {
        var c = SyntheticCapture(clientPort: 50_210, serverPort: 5672)
        c.handshake()
        func method(_ classID: Int, _ methodID: Int, channel: Int, _ arguments: [UInt8]) -> [UInt8] {
            Wire.frame(1, channel: channel, Wire.u16(classID) + Wire.u16(methodID) + arguments)
        }
        func message(channel: Int) -> [UInt8] {
            Wire.frame(2, channel: channel, Wire.u16(60) + Wire.u16(0) + Wire.u64(2) + Wire.u16(0)) + Wire.frame(3, channel: channel, [0x6F, 0x6B])
        }
        func publish(channel: Int) -> [UInt8] {
            method(60, 40, channel: channel, Wire.u16(0) + Wire.shortstr("") + Wire.shortstr("q") + [0]) + message(channel: channel)
        }
        func deliver(tag: Int, redelivered: Bool = false) -> [UInt8] {
            method(60, 60, channel: 2, Wire.shortstr("ctag") + Wire.u64(tag) + [redelivered ? 1 : 0] + Wire.shortstr("")
                   + Wire.shortstr("q")) + message(channel: 2)
        }
        c.send(toServer: true, Array("AMQP".utf8) + [0, 0, 9, 1])
        for channel in [1, 2] {
            c.send(toServer: true, method(20, 10, channel: channel, Wire.shortstr("")))
            c.send(toServer: false, method(20, 11, channel: channel, Wire.longstr([])))
        }
        // Channel 1: confirm mode.
        c.send(toServer: true, method(85, 10, channel: 1, [0]))
        c.send(toServer: false, method(85, 11, channel: 1, []))
        for _ in 0..<3 { c.send(toServer: true, publish(channel: 1)) }
        c.send(toServer: false, method(60, 80, channel: 1, Wire.u64(2) + [1]))      // basic.ack 2, multiple
        c.send(toServer: true, publish(channel: 1))
        c.send(toServer: false, method(60, 120, channel: 1, Wire.u64(4) + [0]))     // basic.nack 4
        // The broker holds the publishers back a while (RabbitMQ's connection.blocked).
        c.send(toServer: false, method(10, 60, channel: 0, Wire.shortstr("low on memory")))
        c.send(toServer: false, method(10, 61, channel: 0, []))
        // Topology: an alternate exchange with no binding, a direct exchange that names it, an
        // internal auto-delete one, and a queue bound to RabbitMQ's amq.topic.
        func declare(_ name: String, _ type: String, bits: UInt8, arguments: [UInt8] = Wire.u32(0)) -> [UInt8] {
            method(40, 10, channel: 1, Wire.u16(0) + Wire.shortstr(name) + Wire.shortstr(type) + [bits] + arguments)
        }
        let alternate = Wire.u32(1 + 18 + 1 + 4 + 2) + [18] + Array("alternate-exchange".utf8) + [UInt8(ascii: "S")] + Wire.longstr(Array("ae".utf8))
        c.send(toServer: true, declare("ae", "fanout", bits: 0b0010))                             // durable
        c.send(toServer: true, declare("x.main", "direct", bits: 0, arguments: alternate))
        c.send(toServer: true, declare("x.internal", "topic", bits: 0b1100))                      // auto-delete, internal
        c.send(toServer: false, method(50, 11, channel: 1, Wire.shortstr("q") + Wire.u32(0) + Wire.u32(0)))  // queue.declare-ok
        c.send(toServer: true, method(50, 20, channel: 1, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("amq.topic")
                                      + Wire.shortstr("a.*") + [0] + Wire.u32(0)))                 // queue.bind
        // Unroutable through the alternate exchange, mandatory: the broker returns it.
        c.send(toServer: true, method(60, 40, channel: 1, Wire.u16(0) + Wire.shortstr("x.main") + Wire.shortstr("nomatch") + [1])
               + message(channel: 1))
        c.send(toServer: false, method(60, 50, channel: 1, Wire.u16(312) + Wire.shortstr("NO_ROUTE") + Wire.shortstr("x.main")
                                       + Wire.shortstr("nomatch")) + message(channel: 1))
        // Routed by the bindings seen, yet returned: a routing mismatch.
        c.send(toServer: true, method(60, 40, channel: 1, Wire.u16(0) + Wire.shortstr("amq.topic") + Wire.shortstr("a.c") + [1])
               + message(channel: 1))
        c.send(toServer: false, method(60, 50, channel: 1, Wire.u16(312) + Wire.shortstr("NO_ROUTE") + Wire.shortstr("amq.topic")
                                       + Wire.shortstr("a.c")) + message(channel: 1))
        // Channel 2: a consumer with a prefetch of 1.
        c.send(toServer: true, method(60, 10, channel: 2, Wire.u32(0) + Wire.u16(1) + [0]))
        c.send(toServer: false, method(60, 11, channel: 2, []))
        c.send(toServer: true, method(60, 20, channel: 2, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("ctag") + [0] + Wire.u32(0)))
        c.send(toServer: false, method(60, 21, channel: 2, Wire.shortstr("ctag")))
        c.send(toServer: false, deliver(tag: 1))
        c.send(toServer: true, method(60, 80, channel: 2, Wire.u64(1) + [0]))       // basic.ack 1
        c.send(toServer: false, deliver(tag: 2))
        c.send(toServer: true, method(60, 120, channel: 2, Wire.u64(2) + [2]))      // basic.nack 2, requeue
        c.send(toServer: false, deliver(tag: 3, redelivered: true))
        c.send(toServer: true, method(60, 80, channel: 2, Wire.u64(3) + [1]))       // basic.ack 3, multiple
        c.send(toServer: false, deliver(tag: 4))
        c.send(toServer: true, method(20, 40, channel: 2, Wire.u16(200) + Wire.shortstr("bye") + Wire.u16(0) + Wire.u16(0)))
        c.send(toServer: false, method(20, 41, channel: 2, []))
        // Channel 3: a global prefetch of 1, held twice; the record is the channel's.
        c.send(toServer: true, method(20, 10, channel: 3, Wire.shortstr("")))
        c.send(toServer: false, method(20, 11, channel: 3, Wire.longstr([])))
        c.send(toServer: true, method(60, 10, channel: 3, Wire.u32(0) + Wire.u16(1) + [1]))
        c.send(toServer: false, method(60, 11, channel: 3, []))
        c.send(toServer: true, method(60, 20, channel: 3, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("g") + [0] + Wire.u32(0)))
        c.send(toServer: false, method(60, 21, channel: 3, Wire.shortstr("g")))
        for tag in 1...2 {
            c.send(toServer: false, method(60, 60, channel: 3, Wire.shortstr("g") + Wire.u64(tag) + [0] + Wire.shortstr("")
                                           + Wire.shortstr("q")) + message(channel: 3))
            c.send(toServer: true, method(60, 80, channel: 3, Wire.u64(tag) + [0]))
        }
        // A consumer whose basic.consume came before the capture.
        c.send(toServer: false, method(60, 60, channel: 3, Wire.shortstr("early") + Wire.u64(3) + [0] + Wire.shortstr("")
                                       + Wire.shortstr("q")) + message(channel: 3))
        c.send(toServer: true, method(60, 80, channel: 3, Wire.u64(3) + [0]))
        c.close()
        return c
    }

    // MARK: - Events

    /// An MQTT connection that loses a segment: a stream event.
    static func events() -> SyntheticCapture {
        var c = SyntheticCapture(clientPort: 50_300, serverPort: 1883)
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "gap", level: 4))
        c.send(toServer: false, MQTTBytes.connack)
        // 20 bytes the capture never had (sent, then their record dropped), then a whole packet.
        c.send(toServer: true, [UInt8](repeating: 0, count: 20))
        c.replaceRecords(c.records.filter { $0.data.count != 20 + 20 + 20 })
        c.send(toServer: true, MQTTBytes.disconnect)
        c.close()
        return c
    }

    /// A capture that starts inside a connection, with the broker's PUBACK of a PUBLISH it never
    /// showed: an unexpected acknowledgement that may predate the capture.
    static func midFlow() -> SyntheticCapture {
        var c = SyntheticCapture(clientPort: 50_500, serverPort: 1883)
        c.send(toServer: false, [0x40, 0x02, 0x00, 0x05])
        c.send(toServer: true, MQTTBytes.disconnect)
        c.close()
        return c
    }

    /// A capture of a link type this tool does not read: a capture event.
    static func unsupportedLinkType() -> [UInt8] {
        var c = SyntheticCapture(clientPort: 50_400, serverPort: 1883, link: .raw)
        c.handshake()
        var bytes = c.bytes
        bytes[20] = 147  // LINKTYPE_USER0, at the header's link type field
        return bytes
    }
}
