import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection
import TestSupport

/// The QoS 1 and 2 flow analysis (`MQTTFlows`) through the connection dissector: what each PDU
/// is told, the records, and the statistics at the end.
@Suite("MQTT message flows")
struct FlowTests {
    /// A connection fed packet by packet, each at its own frame and time (1 ms apart from 1).
    struct Run {
        var dissector: MQTTConnectionDissector
        var frame = 0
        var pdus: [(frame: Int, pdu: DissectedPDU)] = []
        var records: [AnalysisRecord] = []

        init(v5: Bool = false, midStream: Bool = false, options: MQTTOptions = MQTTOptions(), connect: Bool = true,
             clientMaximum: Int? = nil, serverMaximum: Int? = nil) {
            dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: midStream, serverPort: 1883), options: options)
            guard connect else { return }
            let level: UInt8 = v5 ? 5 : 4
            let connectProps = clientMaximum.map { props([0x21, UInt8($0 >> 8), UInt8($0 & 0xFF)]) } ?? props([])
            send(.toServer, packet(0x10, str("MQTT") + [level, 0x02, 0x00, 0x3C] + (v5 ? connectProps : []) + str("c")))
            let connackProps = serverMaximum.map { props([0x21, UInt8($0 >> 8), UInt8($0 & 0xFF)]) } ?? props([])
            send(.toClient, packet(0x20, [0x00, 0x00] + (v5 ? connackProps : [])))
        }

        /// Sends `bytes` at the next frame; returns that frame.
        @discardableResult
        mutating func send(_ direction: Direction, _ bytes: [UInt8]) -> Int {
            frame += 1
            dissector.locate(frame: frame, time: Timestamp(seconds: 100, nanoseconds: UInt32(frame) * 1_000_000))
            var out: [DissectedPDU] = []
            dissector.receive(bytes[...], from: direction, into: &out)
            for pdu in out { pdus.append((frame, pdu)) }
            dissector.takeRecords(into: &records)
            return frame
        }

        mutating func end(_ reason: String = "closed (FIN both ways)") -> FlowStatistics? {
            endAll(reason)?.flows
        }

        /// Ends the connection at the next frame, 1 ms on (or at `seconds`).
        mutating func endAll(_ reason: String = "closed (FIN both ways)", seconds: Int64? = nil) -> ConnectionAnalysis? {
            frame += 1
            dissector.locate(frame: frame, time: seconds.map { Timestamp(seconds: $0, nanoseconds: 0) }
                             ?? Timestamp(seconds: 100, nanoseconds: UInt32(frame) * 1_000_000))
            var ended: [AnalysisRecord] = []
            let analysis = dissector.end(reason) { ended.append($0) }
            records += ended
            return analysis
        }

        /// The `flow` field of the last PDU of `frame`.
        func flow(_ frame: Int) -> Field? {
            pdus.last { $0.frame == frame }.flatMap { $0.pdu.fields.last { $0.key == "flow" } }
        }

        func value(_ frame: Int, _ key: String) -> FieldValue? { flow(frame)?.children.first { $0.key == key }?.value }

        /// The records of the message flows (not how the connection ended).
        var flowRecords: [AnalysisRecord] {
            records.filter { ![.noDisconnect, .closedByBroker, .keepAliveExceeded, .sessionPresentMismatch].contains($0.kind) }
        }

        func annotations(_ frame: Int) -> [String] { pdus.filter { $0.frame == frame }.flatMap(\.pdu.annotations) }
    }

    static func publish(_ id: Int, qos: Int, dup: Bool = false, topic: String = "t", v5: Bool = false) -> [UInt8] {
        packet(0x30 | UInt8(qos << 1) | (dup ? 0x08 : 0), str(topic) + [UInt8(id >> 8), UInt8(id & 0xFF)] + (v5 ? [0] : []) + Array("x".utf8))
    }

    static func ack(_ type: UInt8, _ id: Int, reason: UInt8? = nil) -> [UInt8] {
        let first = type == 6 ? 0x62 : type << 4
        return packet(first, [UInt8(id >> 8), UInt8(id & 0xFF)] + (reason.map { [$0, 0] } ?? []))
    }

    @Test("a QoS 1 flow: the PUBACK names its PUBLISH and the time since it; the flow counts as completed")
    func qos1() {
        var run = Run()
        let p = run.send(.toServer, Self.publish(7, qos: 1))
        let a = run.send(.toClient, Self.ack(4, 7))
        #expect(run.value(p, "state") == .string("sent"))
        #expect(run.value(a, "state") == .string("acknowledged"))
        #expect(run.value(a, "publish_frame") == .int(p))
        #expect(run.value(a, "latency_us") == .int(1000))
        #expect(run.annotations(a) == ["acknowledges #\(p) in 1.00 ms"])
        let stats = run.end()
        #expect(stats?.completed == 1 && stats?.incomplete == 0)
        #expect(stats?.latency.maximum == 1000)
        #expect(run.flowRecords.isEmpty)
    }

    @Test("a QoS 2 flow from the server: PUBREC, PUBREL, PUBCOMP each linked, the PUBCOMP completes it")
    func qos2FromServer() {
        var run = Run()
        let p = run.send(.toClient, Self.publish(65535, qos: 2))
        let rec = run.send(.toServer, Self.ack(5, 65535))
        let rel = run.send(.toClient, Self.ack(6, 65535))
        let comp = run.send(.toServer, Self.ack(7, 65535))
        #expect(run.value(rec, "state") == .string("received"))
        #expect(run.value(rel, "state") == .string("released"))
        #expect(run.value(rel, "previous_frame") == .int(rec))
        #expect(run.value(comp, "state") == .string("completed"))
        #expect(run.value(comp, "previous_frame") == .int(rel))
        #expect(run.value(comp, "publish_frame") == .int(p))
        #expect(run.value(comp, "latency_us") == .int(3000))
        #expect(run.end()?.completed == 1)
        #expect(run.flowRecords.isEmpty)
    }

    @Test("a flow left at each step is reported when the connection ends, with the step reached",
          arguments: [(0, "unacknowledged", "published", "PUBREC never sent"), (1, "incomplete_flow", "received", "PUBREL never sent"),
                      (2, "incomplete_flow", "released", "PUBCOMP never sent")])
    func incompleteAtEachStep(steps: Int, kind: String, step: String, missing: String) {
        var run = Run()
        let p = run.send(.toServer, Self.publish(3, qos: 2))
        var frames = [p]
        if steps >= 1 { frames.append(run.send(.toClient, Self.ack(5, 3))) }
        if steps >= 2 { frames = [p, run.send(.toServer, Self.ack(6, 3))] }
        let stats = run.end("reset (RST)")
        #expect(stats?.incomplete == 1 && stats?.completed == 0)
        #expect(run.flowRecords.count == 1)
        let r = run.flowRecords[0]
        #expect(r.kind.rawValue == kind)
        #expect(r.frames == frames)
        #expect(r.fields.first { $0.key == "step" }?.value == .string(step))
        #expect(r.message.contains(missing) && r.message.contains("reset (RST)"))
    }

    @Test("a flow open at DISCONNECT names the DISCONNECT")
    func openAtDisconnect() {
        var run = Run()
        run.send(.toServer, Self.publish(1, qos: 1))
        let d = run.send(.toServer, [0xE0, 0x00])
        #expect(run.endAll()?.ending == "client DISCONNECT #\(d)")
        #expect(run.flowRecords.map(\.kind) == [.unacknowledged])
        #expect(run.flowRecords[0].message.contains("before the DISCONNECT #\(d)"))
    }

    @Test("an acknowledgement with nothing in flight is unexpected; in a capture that starts mid-connection it may predate it",
          arguments: [false, true])
    func unexpected(midStream: Bool) {
        var run = Run(midStream: midStream, connect: !midStream)
        let a = run.send(.toClient, Self.ack(4, 9))
        #expect(run.value(a, "state") == .string("unexpected"))
        #expect(run.flowRecords.map(\.kind) == [.unexpectedAcknowledgement])
        #expect(run.flowRecords[0].frames == [a])
        #expect((run.value(a, "may_predate_capture") == .bool(true)) == midStream)
        // A PUBACK does not answer a QoS 2 PUBLISH either.
        run.send(.toServer, Self.publish(4, qos: 2))
        let wrong = run.send(.toClient, Self.ack(4, 4))
        #expect(run.value(wrong, "state") == .string("unexpected"))
    }

    @Test("a DUP repeat of a PUBLISH in flight is linked to it and does not start a flow")
    func duplicate() {
        var run = Run()
        let p = run.send(.toServer, Self.publish(2, qos: 1))
        let d = run.send(.toServer, Self.publish(2, qos: 1, dup: true))
        #expect(run.value(d, "state") == .string("retransmitted"))
        #expect(run.value(d, "publish_frame") == .int(p))
        #expect(run.annotations(d) == ["retransmission of #\(p) in 1.00 ms"])
        run.send(.toClient, Self.ack(4, 2))
        let second = run.send(.toClient, Self.ack(4, 2))
        #expect(run.value(second, "state") == .string("unexpected"))
        #expect(run.end()?.completed == 1)
    }

    @Test("a packet identifier reused while its flow is open is reported; the old flow is given up")
    func reused() {
        var run = Run()
        let first = run.send(.toServer, Self.publish(7, qos: 2))
        run.send(.toClient, Self.ack(5, 7))
        let second = run.send(.toServer, Self.publish(7, qos: 2))
        #expect(run.value(second, "reused_from") == .int(first))
        #expect(run.flowRecords.map(\.kind) == [.packetIDReused])
        #expect(run.flowRecords[0].frames == [first, second])
        #expect(run.flowRecords[0].reference == "MQTT 3.1.1 §2.3.1")
        let rec = run.send(.toClient, Self.ack(5, 7))
        #expect(run.value(rec, "publish_frame") == .int(second))
        let stats = run.end()
        #expect(stats?.incomplete == 2)  // the one given up, and the second left at PUBREC
    }

    @Test("identifiers are matched per direction: the same identifier both ways is two flows")
    func perDirection() {
        var run = Run()
        let c = run.send(.toServer, Self.publish(1, qos: 1))
        let s = run.send(.toClient, Self.publish(1, qos: 1))
        let ackOfServer = run.send(.toServer, Self.ack(4, 1))
        let ackOfClient = run.send(.toClient, Self.ack(4, 1))
        #expect(run.value(ackOfServer, "publish_frame") == .int(s))
        #expect(run.value(ackOfClient, "publish_frame") == .int(c))
        #expect(run.flowRecords.isEmpty)
    }

    @Test("5.0: a PUBLISH over the receiver's Receive Maximum is reported, for each side's own maximum")
    func receiveMaximum() {
        var run = Run(v5: true, clientMaximum: 1, serverMaximum: 2)
        run.send(.toServer, Self.publish(1, qos: 1, v5: true))
        let second = run.send(.toServer, Self.publish(2, qos: 1, v5: true))
        #expect(run.flowRecords.isEmpty)
        let third = run.send(.toServer, Self.publish(3, qos: 2, v5: true))
        #expect(run.value(third, "in_flight") == .int(3))
        #expect(run.value(third, "receive_maximum") == .int(2))
        #expect(run.flowRecords.map(\.kind) == [.receiveMaximumExceeded])
        #expect(run.value(second, "in_flight") == nil)
        // The server's PUBLISHes are bounded by the client's maximum, 1.
        run.send(.toClient, Self.publish(9, qos: 1, v5: true))
        let over = run.send(.toClient, Self.publish(10, qos: 1, v5: true))
        #expect(run.value(over, "receive_maximum") == .int(1))
    }

    @Test("5.0: an acknowledgement with a failure reason code refuses the PUBLISH and ends its flow")
    func refused() {
        var run = Run(v5: true)
        let p = run.send(.toServer, Self.publish(5, qos: 1, v5: true))
        let a = run.send(.toClient, Self.ack(4, 5, reason: 0x87))
        #expect(run.value(a, "state") == .string("refused"))
        #expect(run.value(a, "reason_code") == .int(0x87))
        #expect(run.annotations(a) == ["refuses #\(p): 0x87 Not authorized"])
        #expect(run.flowRecords.map(\.kind) == [.refused])
        // 0x10 No matching subscribers is a success: the flow completes.
        run.send(.toServer, Self.publish(6, qos: 1, v5: true))
        let ok = run.send(.toClient, Self.ack(4, 6, reason: 0x10))
        #expect(run.value(ok, "state") == .string("acknowledged"))
        let stats = run.end()
        #expect(stats?.completed == 1 && stats?.incomplete == 1)
    }

    @Test("with the analysis off, PDUs carry no flow and the connection no statistics")
    func off() {
        var options = MQTTOptions()
        options.analysis = false
        var run = Run(options: options)
        let p = run.send(.toServer, Self.publish(1, qos: 1))
        let a = run.send(.toClient, Self.ack(4, 1))
        #expect(run.flow(p) == nil && run.flow(a) == nil && run.annotations(a).isEmpty)
        #expect(run.end() == nil)
    }

    @Test("percentiles from the latency histogram stay within 7% of the exact value")
    func histogram() {
        var h = LatencyHistogram()
        let values = (1...1000).map { $0 * 37 }
        for v in values { h.record(v) }
        for p in [50.0, 90, 99] {
            let exact = values[Int((p / 100 * Double(values.count)).rounded(.up)) - 1]
            let got = h.percentile(p)!
            #expect(abs(Double(got - exact)) <= 0.07 * Double(exact), "p\(p): \(got) vs \(exact)")
        }
        #expect(h.percentile(100) == 37_000 && h.percentile(0) == 37)
        var other = LatencyHistogram()
        other.record(5)
        h.add(other)
        #expect(h.count == 1001 && h.minimum == 5)
    }
}

extension FlowTests {
    @Test("past the flows followed in flight, later flows are not followed, said once; their acknowledgements are not flagged")
    func notFollowed() {
        var options = MQTTOptions()
        options.maxFlowsInFlight = 2
        var run = Run(options: options)
        run.send(.toClient, Self.publish(1, qos: 1))
        run.send(.toClient, Self.publish(2, qos: 1))
        let third = run.send(.toClient, Self.publish(3, qos: 1))
        run.send(.toClient, Self.publish(4, qos: 1))
        #expect(run.flow(third) == nil)
        #expect(run.flowRecords.map(\.kind) == [.flowsNotFollowed])
        #expect(run.flowRecords[0].frames == [third])
        let ackOfThird = run.send(.toServer, Self.ack(4, 3))
        #expect(run.flow(ackOfThird) == nil && run.flowRecords.count == 1)
        let ackOfFirst = run.send(.toServer, Self.ack(4, 1))
        #expect(run.value(ackOfFirst, "state") == .string("acknowledged"))
        // The client's direction has its own limit, not reached.
        run.send(.toServer, Self.publish(9, qos: 1))
        let a = run.send(.toClient, Self.ack(4, 77))
        #expect(run.value(a, "state") == .string("unexpected"))
        let stats = run.end()
        #expect(stats?.completed == 1)
    }
}

/// How a connection is watched as a whole: keep-alive, pings, session, its end.
@Suite("MQTT connection analysis")
struct ConnectionWatchTests {
    typealias Run = FlowTests.Run

    static func connect(keepAlive: Int, clean: Bool = true) -> [UInt8] {
        packet(0x10, str("MQTT") + [4, clean ? 0x02 : 0x00, UInt8(keepAlive >> 8), UInt8(keepAlive & 0xFF)] + str("c"))
    }

    /// Sends `bytes` at `seconds` after 100 s.
    static func send(_ run: inout Run, _ direction: Direction, _ bytes: [UInt8], at seconds: Int64) -> Int {
        run.frame += 1
        run.dissector.locate(frame: run.frame, time: Timestamp(seconds: 100 + seconds, nanoseconds: 0))
        var out: [DissectedPDU] = []
        run.dissector.receive(bytes[...], from: direction, into: &out)
        for pdu in out { run.pdus.append((run.frame, pdu)) }
        run.dissector.takeRecords(into: &run.records)
        return run.frame
    }

    @Test("a silence of the client's over 1.5 times the keep-alive is reported between its packets; 1.5 times exactly is not")
    func silence() {
        var run = Run(connect: false)
        _ = Self.send(&run, .toServer, Self.connect(keepAlive: 10), at: 0)
        _ = Self.send(&run, .toClient, packet(0x20, [0, 0]), at: 0)
        _ = Self.send(&run, .toServer, [0xC0, 0], at: 15)       // 15 s: exactly 1.5 × 10
        #expect(run.records.isEmpty)
        let before = run.frame
        let late = Self.send(&run, .toServer, [0xC0, 0], at: 31) // 16 s after the last
        #expect(run.records.map(\.kind) == [.keepAliveExceeded])
        #expect(run.records.first?.frames == [before, late])
        #expect(run.records.first?.fields.first { $0.key == "silence_ms" }?.value == .int(16_000))
    }

    @Test("a keep-alive of 0 turns the check off")
    func keepAliveOff() {
        var run = Run(connect: false)
        _ = Self.send(&run, .toServer, Self.connect(keepAlive: 0), at: 0)
        _ = Self.send(&run, .toServer, [0xC0, 0], at: 1000)
        #expect(run.records.isEmpty)
    }

    @Test("a PINGRESP names the PINGREQ it answers and the round trip")
    func ping() {
        var run = Run()
        let request = run.send(.toServer, [0xC0, 0])
        let response = run.send(.toClient, [0xD0, 0])
        #expect(run.annotations(response) == ["answers PINGREQ #\(request) in 1.00 ms"])
        let ping = run.pdus.last { $0.frame == response }?.pdu.fields.last { $0.key == "ping" }
        #expect(ping?.children.first { $0.key == "latency_us" }?.value == .int(1000))
    }

    @Test("Session Present to a clean CONNECT is a mismatch; without Clean Session the CONNACK says whether the session was resumed")
    func session() {
        var clean = Run(connect: false)
        clean.send(.toServer, Self.connect(keepAlive: 60))
        let connack = clean.send(.toClient, packet(0x20, [0x01, 0x00]))
        #expect(clean.records.map(\.kind) == [.sessionPresentMismatch])
        #expect(clean.records.first?.frames == [connack])
        var kept = Run(connect: false)
        kept.send(.toServer, Self.connect(keepAlive: 60, clean: false))
        let resumed = kept.send(.toClient, packet(0x20, [0x01, 0x00]))
        #expect(kept.records.isEmpty)
        #expect(kept.annotations(resumed) == ["session resumed"])
    }

    @Test("how a connection ends: DISCONNECT, the client's close, the broker's close with its cause")
    func endings() {
        // The client's DISCONNECT, then FIN both ways.
        var a = Run()
        let d = a.send(.toServer, [0xE0, 0])
        #expect(a.endAll()?.ending == "client DISCONNECT #\(d)")
        #expect(a.records.isEmpty)
        // The client's FIN first, no DISCONNECT: its will fires.
        var b = Run()
        b.frame += 1
        b.dissector.locate(frame: b.frame, time: Timestamp(seconds: 101, nanoseconds: 0))
        var none: [DissectedPDU] = []
        b.dissector.finish(.toServer, into: &none)
        #expect(b.endAll()?.ending == "client closed it without DISCONNECT")
        #expect(b.records.map(\.kind) == [.noDisconnect])
        // The broker's FIN first after the client's silence: keep-alive expired.
        var c = Run(connect: false)
        _ = ConnectionWatchTests.send(&c, .toServer, Self.connect(keepAlive: 2), at: 0)
        _ = ConnectionWatchTests.send(&c, .toClient, packet(0x20, [0, 0]), at: 0)
        c.frame += 1
        c.dissector.locate(frame: c.frame, time: Timestamp(seconds: 105, nanoseconds: 0))
        c.dissector.finish(.toClient, into: &none)
        let ending = c.endAll(seconds: 105)?.ending
        #expect(ending == "broker closed it: keep-alive expired")
        #expect(c.records.map(\.kind) == [.keepAliveExceeded, .closedByBroker])
        // A refused CONNECT: the broker closes it.
        var r = Run(connect: false)
        r.send(.toServer, Self.connect(keepAlive: 60))
        r.send(.toClient, packet(0x20, [0, 5]))
        #expect(r.endAll()?.ending == "broker closed it: the CONNECT was refused (Connection Refused: not authorized)")
        // The capture ending is not the traffic's doing.
        var e = Run()
        #expect(e.endAll("end of capture")?.ending == "end of capture")
        #expect(e.records.isEmpty)
    }
}

@Suite("MQTT clients across connections")
struct ClientsTests {
    @Test("a backoff's pattern: doubling intervals are exponential, steady ones the same, others none")
    func backoff() {
        #expect(MQTTClients.backoff([1000, 2000, 4100, 7900])?.hasPrefix("exponential backoff, ×2.0") == true)
        #expect(MQTTClients.backoff([500, 510, 490]) == "about the same interval each time")
        #expect(MQTTClients.backoff([100, 5000, 200]) == nil)
        #expect(MQTTClients.backoff([100, 200]) == nil)
    }

    static func connect(_ id: String, stream: Int, frame: Int, at seconds: Int64) -> OutputEvent {
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "CONNECT", wireLength: 20, kind: "CONNECT")
        pdu.facts!.clientID = id
        return .pdu(StreamContext(frame: frame, time: Timestamp(seconds: seconds, nanoseconds: 0), stream: stream,
                                  source: "c", destination: "s"), .toServer, pdu)
    }

    static func closed(stream: Int, at seconds: Int64) -> OutputEvent {
        .connectionClosed(ConnectionSummary(stream: stream, client: "c", server: "s", protocolName: "mqtt",
                                            firstSeen: Timestamp(seconds: 0, nanoseconds: 0),
                                            lastSeen: Timestamp(seconds: seconds, nanoseconds: 0),
                                            bytesToServer: 0, bytesToClient: 0, closeReason: "reset (RST)"))
    }

    @Test("reconnects are timed from the end of a connection to the next CONNECT; an overlap is a takeover")
    func reconnectsAndTakeover() {
        let clients = MQTTClients()
        let events: [OutputEvent] = [
            Self.connect("a", stream: 0, frame: 1, at: 10), Self.closed(stream: 0, at: 11),
            Self.connect("a", stream: 1, frame: 5, at: 13), Self.closed(stream: 1, at: 13),
            Self.connect("b", stream: 2, frame: 7, at: 20),
            Self.connect("b", stream: 3, frame: 9, at: 21), Self.closed(stream: 2, at: 21), Self.closed(stream: 3, at: 30),
        ]
        for e in events where clients.reads(e) { clients.observe(e) }
        var records: [AnalysisRecord] = []
        clients.finish { records.append($0) }
        let reconnect = records.first { $0.kind == .reconnect }
        #expect(reconnect?.frames == [1, 5])
        #expect(reconnect?.fields.first { $0.key == "intervals_ms" }?.children.map(\.value) == [.int(2000)])
        let takeover = records.first { $0.kind == .sessionTakeover }
        #expect(takeover?.frames == [7, 9])
        // Stream 2 ended after the takeover, reset: how is said.
        #expect(takeover?.message.hasSuffix("the older one ended otherwise (reset (RST))") == true)
        #expect(MQTTClients.olderEnd("broker DISCONNECT #9 (Session taken over)")
            == "the broker ended the older one, the takeover its cause (broker DISCONNECT #9 (Session taken over))")
        #expect(MQTTClients.olderEnd("broker reset it: no cause in the capture") == "the broker ended the older one, the takeover its cause (broker reset it)")
        #expect(MQTTClients.olderEnd(nil) == "the broker closes the older one (its end is not in the capture)")
        // Not a CONNACK, not the server's side.
        let connack = OutputEvent.pdu(StreamContext(frame: 1, time: Timestamp(seconds: 0, nanoseconds: 0), stream: 0, source: "s", destination: "c"),
                                      .toClient, DissectedPDU(protocolName: "mqtt", summary: "CONNACK accepted", fields: [], wireLength: 4))
        #expect(!clients.reads(connack))
    }
}

extension FlowTests {
    @Test("a PUBLISH crosses to the caller's thread as a counted run of its topic, length and retain flag, not its PDU")
    func forwardedPublish() throws {
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "PUBLISH QoS 0 a/b (5 bytes)", wireLength: 12, kind: "PUBLISH")
        pdu.facts!.topic = "a/b"
        pdu.facts!.payloadLength = 5
        pdu.facts!.retained = true
        let context = StreamContext(frame: 3, time: Timestamp(seconds: 1, nanoseconds: 0), stream: 2, source: "c", destination: "s")
        let publish = OutputEvent.pdu(context, .toServer, pdu)
        let broker = MQTTBroker()
        guard case .counted(let run)? = broker.forwarded(publish) else {
            Issue.record("not a counted run")
            return
        }
        let only = try #require(run.pdus.first)
        #expect(run.pdus.count == 1 && only.kind == "PUBLISH" && only.topic == "a/b" && only.payloadLength == 5 && only.retained)
        #expect(run.context.frame == 3 && run.context.stream == 2 && run.direction == .toServer && run.protocolName == "mqtt")
        // The broker reads what it made; the clients' analysis does not, so the pair forwards it too.
        #expect(broker.reads(.counted(run)) && !MQTTClients().reads(.counted(run)))
        let both = SpanningAnalyses([MQTTClients(), MQTTBroker()])
        guard case .counted? = both.forwarded(publish) else {
            Issue.record("the pair did not forward the broker's run")
            return
        }
        // A CONNECT both read crosses as it is; a CONNACK, read by neither, not at all.
        guard case .pdu(let e)? = both.forwarded(ClientsTests.connect("x", stream: 0, frame: 1, at: 0)) else {
            Issue.record("the CONNECT did not cross as it is")
            return
        }
        #expect(e.pdu.summaryFacts.clientID == "x")
        let connack = OutputEvent.pdu(context, .toClient, DissectedPDU(protocolName: "mqtt", summary: "CONNACK accepted", fields: [], wireLength: 4))
        #expect(both.forwarded(connack) == nil)
    }

    @Test("up to four latencies are exact; a fifth moves them into the histogram; adding keeps the counts")
    func exactLatencies() {
        var h = LatencyHistogram()
        for v in [300, 100, 200] { h.record(v) }
        #expect(h.percentile(50) == 200 && h.percentile(99) == 300 && h.percentile(1) == 100)
        var other = LatencyHistogram()
        other.record(1000)
        h.add(other)
        #expect(h.count == 4 && h.percentile(99) == 1000 && h.percentile(50) == 200)
        h.record(5000)
        #expect(h.count == 5 && h.maximum == 5000)
        let p50 = h.percentile(50)!
        #expect(abs(p50 - 300) <= 21, "\(p50)")  // the 3rd of 5: 300, within 7%
        var many = LatencyHistogram()
        for v in 1...10 { many.record(v * 100) }
        var few = LatencyHistogram()
        few.record(50)
        many.add(few)
        #expect(many.count == 11 && many.minimum == 50)
    }
}

@Suite("MQTT broker model")
struct BrokerTests {
    @Test("topic filters match as MQTT says: + one level, # the rest and the parent, $ topics apart, shared subscriptions",
          arguments: [("a/+/c", "a/b/c", true), ("a/+/c", "a/b/d", false), ("a/#", "a", true), ("a/#", "a/b/c", true),
                      ("#", "$SYS/x", false), ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true), ("a/+", "a/b/c", false),
                      ("+", "", true), ("a//b", "a//b", true), ("$share/g/a/+", "a/b", true), ("a/b", "a/b/", false)])
    func filters(filter: String, topic: String, matches: Bool) {
        #expect(MQTTBroker.matches(filter: filter, topic: topic) == matches)
    }

    /// The filter tree (what the broker model counts a topic's subscriptions with) against
    /// `matches` summed over the filters, filter by filter: random filters, valid and not
    /// (`#` inside, `$share/` with and without a name, `$` levels, Unicode in two forms), added
    /// and removed at random, and random topics. Seeded: the same cases each run.
    @Test("the filter tree counts a topic's subscriptions as matching each filter in turn does")
    func filterTreeCountsAsEachFilter() {
        var random = SplitMix64(seed: 0x5EED_F17E)
        let levels = ["", "a", "b", "+", "#", "$", "$SYS", "a+", "#b", "+a", "\u{E9}", "e\u{301}", "/"]
        let prefixes = ["", "", "", "$share/g/", "$share/", "$share/nog", "$share//"]
        // Topics name no wildcards.
        let topicLevels = levels.filter { !$0.contains("+") && !$0.contains("#") }
        func text(_ maxLevels: Int, from levels: [String]) -> String {
            (0..<Int.random(in: 1...maxLevels, using: &random)).map { _ in levels.randomElement(using: &random)! }.joined(separator: "/")
        }
        var tree = MQTTFilterTree()
        // By text, as the broker model keeps its counts: a filter equal to an open one in another
        // Unicode form counts as that one, matched with the first form's bytes.
        var open: [String: (filter: String, count: Int)] = [:]
        var checked = 0
        for _ in 0..<1200 {
            let filter = prefixes.randomElement(using: &random)! + text(4, from: levels)
            if let present = open[filter], Bool.random(using: &random) {
                tree.add(-1, to: filter)
                open[filter] = present.count == 1 ? nil : (present.filter, present.count - 1)
            } else {
                tree.add(1, to: filter)
                open[filter, default: (filter, 0)].count += 1
            }
            for _ in 0..<3 {
                let topic = (Bool.random(using: &random) ? "$" : "") + text(4, from: topicLevels)
                let expected = open.values.reduce(0) { $0 + (MQTTBroker.matches(filter: $1.filter, topic: topic) ? $1.count : 0) }
                #expect(tree.count(matching: topic) == expected, "topic \(topic), filters \(open.values.map(\.filter))")
                checked += expected > 0 ? 1 : 0
            }
        }
        // Enough of the topics matched something for the comparison to mean something.
        #expect(checked > 500, "\(checked)")
        // Every subscription taken back: nothing is left of them (memory stays that of the open ones).
        for (_, entry) in open { tree.add(-entry.count, to: entry.filter) }
        #expect(tree.isEmpty)
    }
}


extension FlowTests {
    @Test("a DUP repeat after PUBREC is a retransmission of the flow, not a reused identifier")
    func duplicateAfterPubrec() {
        var run = Run()
        let p = run.send(.toServer, Self.publish(4, qos: 2))
        run.send(.toClient, Self.ack(5, 4))
        let d = run.send(.toServer, Self.publish(4, qos: 2, dup: true))
        #expect(run.value(d, "state") == .string("retransmitted"))
        #expect(run.value(d, "publish_frame") == .int(p))
        #expect(run.flowRecords.isEmpty)
        run.send(.toServer, Self.ack(6, 4))
        let comp = run.send(.toClient, Self.ack(7, 4))
        #expect(run.value(comp, "state") == .string("completed"))
        #expect(run.end()?.completed == 1)
    }
}
