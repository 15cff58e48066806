import Foundation
import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection
import TestSupport

@Suite("Connection dissector")
struct ConnectionTests {
    static let info = ConnectionInfo(startedMidStream: false, serverPort: 1883)

    /// CONNECT and CONNACK that allow 10 topic aliases each way.
    static let connect5 = packet(0x10, str("MQTT") + [0x05, 0x02, 0x00, 0x3C] + props([0x22, 0x00, 0x0A]) + str("c"))
    static let connack5 = packet(0x20, [0x00, 0x00] + props([0x22, 0x00, 0x0A]))

    static func publish(topic: String, alias: Int, payload: String) -> [UInt8] {
        packet(0x30,                                                 // PUBLISH QoS 0
               str(topic) +                                          // topic (empty: use the alias)
               props([0x23, UInt8(alias >> 8), UInt8(alias & 0xFF)]) + // topic alias
               Array(payload.utf8))
    }

    @Test("copies of a dissector decode on two threads at once, each with its own summary lines")
    func copiesOnThreads() {
        var base = MQTTConnectionDissector(info: Self.info, options: MQTTOptions())
        var setup: [DissectedPDU] = []
        base.receive(packet(0x10, str("MQTT") + [0x04, 0x02, 0x00, 0x3C] + str("c"))[...], from: .toServer, into: &setup)
        base.receive(packet(0x20, [0x00, 0x00])[...], from: .toClient, into: &setup)
        // Unchecked: each thread takes its own copy out before using it (what the test checks).
        final class Copies: @unchecked Sendable {
            let dissectors: [MQTTConnectionDissector]
            init(_ dissectors: [MQTTConnectionDissector]) { self.dissectors = dissectors }
        }
        let copies = Copies([base, base])
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var summaries: [Int: [String]] = [:]
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            var d = copies.dissectors[i]
            var out: [DissectedPDU] = []
            for n in 0..<3_000 {
                let topic = "thread\(i)/message/\(n)"
                d.receive(packet(0x30, str(topic) + Array("payload \(n)".utf8))[...], from: .toServer, into: &out)
            }
            results.lock.lock()
            results.summaries[i] = out.map(\.summary)
            results.lock.unlock()
        }
        for i in 0..<2 {
            let expected = (0..<3_000).map { n in "PUBLISH QoS 0 thread\(i)/message/\(n) (\("payload \(n)".utf8.count) bytes)" }
            #expect(results.summaries[i] == expected, "thread \(i)")
        }
    }

    @Test("topic aliases resolve per direction")
    func topicAliasesPerDirection() {
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions())
        var out: [DissectedPDU] = []
        d.receive(Self.connect5[...], from: .toServer, into: &out)
        d.receive(Self.connack5[...], from: .toClient, into: &out)
        d.receive(Self.publish(topic: "client/topic", alias: 1, payload: "a")[...], from: .toServer, into: &out)
        d.receive(Self.publish(topic: "server/topic", alias: 1, payload: "b")[...], from: .toClient, into: &out)
        d.receive(Self.publish(topic: "", alias: 1, payload: "c")[...], from: .toServer, into: &out)
        d.receive(Self.publish(topic: "", alias: 1, payload: "d")[...], from: .toClient, into: &out)
        d.receive(Self.publish(topic: "", alias: 2, payload: "e")[...], from: .toServer, into: &out)
        #expect(out.count == 7)
        #expect(d.session.version == .v5)
        #expect(d.session.versionSource == .connect)
        // `topic` is the topic published to, resolved from this direction's alias map.
        #expect(out[4].string("topic") == "client/topic")
        #expect(out[4].int("topic_alias") == 1)
        #expect(out[4].field("topic_from_alias")?.value == .bool(true))
        #expect(out[2].field("topic_from_alias") == nil)
        #expect(out[4].summary == "PUBLISH QoS 0 client/topic (alias 1) (1 bytes)")
        #expect(out[5].string("topic") == "server/topic")
        #expect(out[6].problemCodes == ["unknown-topic-alias"])
        #expect(out[2...5].allSatisfy { $0.problems.isEmpty })
    }

    @Test("a topic alias above the receiver's Topic Alias Maximum is a problem")
    func aliasOverMaximum() {
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions())
        var out: [DissectedPDU] = []
        d.receive(Self.connect5[...], from: .toServer, into: &out)
        d.receive(packet(0x20, [0x00, 0x00] + props([]))[...], from: .toClient, into: &out)   // CONNACK: no aliases
        d.receive(Self.publish(topic: "t", alias: 1, payload: "x")[...], from: .toServer, into: &out)
        d.receive(Self.publish(topic: "t", alias: 11, payload: "x")[...], from: .toClient, into: &out)
        d.receive(Self.publish(topic: "t", alias: 10, payload: "x")[...], from: .toClient, into: &out)
        #expect(out[2].problemCodes == ["topic-alias-over-maximum"])   // server allowed none
        #expect(out[3].problemCodes == ["topic-alias-over-maximum"])   // client allowed 10
        #expect(out[4].problems.isEmpty)
    }

    @Test("the version learned from CONNECT applies to both directions")
    func versionFromConnect() {
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        d.receive(Fixture.connect5[...], from: .toServer, into: &out)
        d.receive(Fixture.puback5Reason[...], from: .toClient, into: &out)
        #expect(out[1].string("reason") == "No matching subscribers")
        #expect(out[1].problems.isEmpty)
    }

    @Test("without CONNECT, the assumed version is used")
    func assumedVersion() {
        let pdus = MQTTDecoder.decodeAll(Fixture.puback5Reason, version: .v5)
        #expect(pdus.count == 1)
        #expect(pdus[0].int("reason_code") == 0x10)
        #expect(pdus[0].problems.isEmpty)
    }

    @Test("without CONNECT or assumption, a packet that only parses as 5.0 switches the connection to 5.0")
    func guessesVersion() {
        var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 1883), options: MQTTOptions())
        var out: [DissectedPDU] = []
        d.receive((Fixture.puback311 + Fixture.suback5)[...], from: .toClient, into: &out)
        d.finish(.toClient, into: &out)
        #expect(out.count == 2)
        #expect(out[0].problemCodes == ["version-guessed"])            // decoded as 3.1.1, noted
        #expect(out[1].problemCodes == ["version-guessed"])            // parses cleanly only as 5.0
        #expect(out[1].summary == "SUBACK id=3 granted QoS 1, not authorized (0x87)")
        #expect(d.session.version == .v5)
        #expect(d.session.versionSource == .guessed)
    }

    @Test("a gap inside a PDU marks it truncated and the next PDU decodes cleanly")
    func gapInsidePDU() {
        let publish = packet(0x32, str("big/topic") + [0x00, 0x05] + [UInt8](repeating: 0x41, count: 100))
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        d.receive(publish[..<30], from: .toServer, into: &out)
        d.gap(40, in: .toServer, into: &out)
        d.receive(publish[70...], from: .toServer, into: &out)
        d.receive(Fixture.puback311[...], from: .toServer, into: &out)
        #expect(out.count == 2)
        #expect(out[0].string("topic") == "big/topic")
        #expect(out[0].int("packet_id") == 5)
        #expect(out[0].int("payload_length") == 100)
        #expect(out[0].problemCodes == ["missing-bytes"])
        #expect(out[0].problems.first?.message == "40 bytes missing from the capture inside this packet")
        #expect(out[0].summary.hasSuffix("[truncated]"))
        #expect(out[1].summary == "PUBACK id=7")
        #expect(out[1].problems.isEmpty)
    }

    @Test("mid-stream start skips garbage, reports it, and finds the first real packet")
    func midStream() {
        let garbage: [UInt8] = [0x7B, 0x22, 0x74, 0x22, 0x3A, 0x32, 0x31, 0x7D, 0x00, 0xFF]
        let stream = garbage + Fixture.publish311QoS1 + Fixture.pingreq
        var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 1883),
                                        options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        for i in stream.indices { d.receive(stream[i..<(i + 1)], from: .toServer, into: &out) }
        d.finish(.toServer, into: &out)
        #expect(out.map { $0.string("type") } == ["PUBLISH", "PINGREQ"])
        #expect(out[0].problemCodes == ["skipped-bytes"])
        #expect(out[0].problems.first?.message.hasPrefix("10 bytes skipped") == true)
        #expect(out[0].string("topic") == "sensors/kitchen/temp")
    }

    @Test("finish reports an incomplete trailing PDU")
    func finishIncomplete() {
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        d.receive((Fixture.puback311 + Fixture.publish311QoS1.prefix(12))[...], from: .toServer, into: &out)
        #expect(out.count == 1)
        d.finish(.toServer, into: &out)
        #expect(out.count == 2)
        #expect(out[1].string("type") == "PUBLISH")
        #expect(out[1].problemCodes.contains("incomplete"))
        #expect(out[1].wireLength == Fixture.publish311QoS1.count)
    }

    @Test("bytes that never make a packet are reported at finish; a trailing gap alone is left to the reassembler")
    func trailingSkipped() {
        var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 1883),
                                        options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        d.receive(Fixture.pingreq[...], from: .toServer, into: &out)
        d.gap(10, in: .toServer, into: &out)
        d.finish(.toServer, into: &out)
        #expect(out.map(\.summary) == ["PINGREQ"])
        d.receive([0xFF, 0xFE, 0xFD][...], from: .toClient, into: &out)
        d.finish(.toClient, into: &out)
        #expect(out.count == 2)
        #expect(out[1].int("skipped_bytes") == 3)
        #expect(out[1].problemCodes == ["incomplete-at-end"])
    }

    @Test("a 1.5 MB PUBLISH in 1460-byte chunks gives one PUBLISH with the full payload length and bounded held bytes")
    func largePublish() {
        let payloadLength = 1_500_000
        let pdu = packet(0x32, str("big/blob") + [0x00, 0x2A] + [UInt8](repeating: 0x61, count: payloadLength))
        var framer = MQTTFramer(options: MQTTOptions(), startsMidStream: false)
        var d = MQTTConnectionDissector(info: Self.info, options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        var frames: [MQTTFrame] = []
        var start = 0
        while start < pdu.count {
            let chunk = pdu[start..<min(start + 1460, pdu.count)]
            d.receive(chunk, from: .toServer, into: &out)
            framer.append(chunk)
            while case .frame(let f) = framer.next() { frames.append(f) }
            start += 1460
        }
        #expect(out.count == 1)
        #expect(out.first?.string("topic") == "big/blob")
        #expect(out.first?.int("packet_id") == 42)
        #expect(out.first?.int("payload_length") == payloadLength)
        #expect(out.first?.wireLength == pdu.count)
        #expect(out.first?.problemCodes == ["over-hold-limit"])
        #expect(frames.count == 1)
        #expect(frames.first?.bytes.count == 1 << 20)
        #expect(frames.first?.unheldBytes == pdu.count - (1 << 20))
        if case .text(let preview, let length)? = out.first?.field("payload")?.value {
            #expect(preview.utf8.count == 256)
            #expect(length == payloadLength)
        } else {
            Issue.record("payload should be a text preview")
        }
    }

    @Test("decodeAll decodes a whole client stream, learning the version from CONNECT")
    func decodeAll() {
        let pdus = MQTTDecoder.decodeAll(Fixture.connect5 + Fixture.publish5 + Fixture.subscribe5 + Fixture.disconnect5)
        #expect(pdus.map(\.summary) == [
            "CONNECT v5.0 client=sensor-1 clean keep-alive=60 will=status/sensor-1",
            "PUBLISH id=9 QoS 1 sensors/kitchen/temp (4 bytes) retain",
            "SUBSCRIBE id=3 a/+/c QoS 1, x/# QoS 0",
            "DISCONNECT session taken over (0x8E)",
        ])
        #expect(pdus.allSatisfy { $0.problems.isEmpty })
    }

    @Test("random bytes never trap, in any version, whole or chunked, with gaps", arguments: [1, 2, 3, 4] as [UInt64])
    func randomBytes(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for round in 0..<150 {
            let count = Int(rng.next() % 600)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Bias some rounds towards MQTT-looking bytes so deeper paths run.
            if round % 3 == 0, !bytes.isEmpty { bytes[0] = [0x10, 0x20, 0x30, 0x32, 0x82, 0x90, 0xF0, 0xE0][Int(rng.next() % 8)] }
            if round % 3 == 0, bytes.count > 1 { bytes[1] = UInt8(min(bytes.count - 2, 127)) }
            for version in MQTTVersion.allCases {
                let pdu = decode(bytes, version)
                #expect(pdu.protocolName == "mqtt")
                for field in pdu.fields { checkRanges(field, within: max(pdu.wireLength, bytes.count)) }
            }
            let options = MQTTOptions(assumedVersion: round % 2 == 0 ? nil : .v5, payloadPreviewBytes: 16,
                                      maxHeldPDUBytes: 64, resyncWindowBytes: 256)
            var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: round % 4 == 1, serverPort: 1883), options: options)
            var out: [DissectedPDU] = []
            var i = 0
            while i < bytes.count {
                let n = 1 + Int(rng.next() % 50)
                let direction: Direction = rng.next() % 2 == 0 ? .toServer : .toClient
                d.receive(bytes[i..<min(i + n, bytes.count)], from: direction, into: &out)
                if rng.next() % 10 == 0 { d.gap(Int(rng.next() % 100), in: direction, into: &out) }
                i += n
            }
            d.finish(.toServer, into: &out)
            d.finish(.toClient, into: &out)
            #expect(out.allSatisfy { $0.protocolName == "mqtt" && !$0.summary.isEmpty })
            #expect(out.allSatisfy { pdu in pdu.fields.first?.key != "type" || pdu.fields.dropFirst().first?.key == "remaining_length" })
        }
    }

    func checkRanges(_ field: Field, within length: Int) {
        if let r = field.range { #expect(r.lowerBound >= 0 && r.upperBound <= length, "\(field.key) \(r)") }
        for child in field.children { checkRanges(child, within: length) }
    }
}

@Suite("Connection dissector, a segment a part at a time")
struct ReceiveInPartsTests {
    @Test("a segment of 1,000 packets, limited to 256 PDUs a call: the same PDUs as all at once, in parts of at most 256")
    func parts() {
        // Stray bytes first (a problem attached to the next PDU), then acknowledgements and
        // publishes, then half a packet the framer keeps for the next segment.
        var segment: [UInt8] = [0x00, 0x00, 0x00]
        for i in 0..<1_000 {
            segment += i % 3 == 0 ? packet(0x32, str("t/\(i)") + [UInt8(i >> 8), UInt8(i & 0xFF)] + Array("p\(i)".utf8))
                                  : packet(0x40, [UInt8(i >> 8), UInt8(i & 0xFF)])
        }
        let next = packet(0x30, str("last") + Array("payload".utf8))
        segment += next[..<5]
        let info = ConnectionInfo(startedMidStream: true, serverPort: 1883)
        var whole = MQTTConnectionDissector(info: info, options: MQTTOptions())
        var parted = whole
        var all: [DissectedPDU] = []
        whole.receive(segment[...], from: .toServer, into: &all)
        whole.receive(next[5...], from: .toServer, into: &all)

        let fed = receiveInParts(segment[...], to: &parted, from: .toServer, limit: 256)
        var inParts = fed.pdus
        let sizes = fed.parts
        var last: [DissectedPDU] = []
        #expect(!parted.receive(next[5...], from: .toServer, into: &last, limit: 256))
        inParts += last

        #expect(all.count == 1_001)
        #expect(all[0].problemCount > 0, "the stray bytes are reported on the first packet")
        #expect(sizes.allSatisfy { $0 <= 256 })
        #expect(sizes.prefix(3) == [256, 256, 256])
        #expect(readings(inParts) == readings(all))
    }
}
