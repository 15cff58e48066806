import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection
import TestSupport

/// While resynchronising, a candidate packet that ends exactly where a segment ended is
/// accepted at once, so it comes out with the segment that completed it.
@Suite("Resynchronising at segment ends")
struct SegmentEndTests {
    /// One capture record's TCP payload.
    struct Segment {
        var frame: Int
        var direction: Direction
        var bytes: [UInt8]
    }

    /// Feeds each segment to a mid-stream dissector (as the pipeline does), then finishes
    /// both directions; each PDU is paired with the frame during which it came out
    /// (`finish` counts as frame 0).
    static func dissect(_ segments: [Segment]) -> [(frame: Int, pdu: DissectedPDU)] {
        var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 1883), options: MQTTOptions())
        var result: [(frame: Int, pdu: DissectedPDU)] = []
        var out: [DissectedPDU] = []
        for segment in segments {
            d.receive(segment.bytes[...], from: segment.direction, into: &out)
            result += out.map { (segment.frame, $0) }
            out.removeAll()
        }
        d.finish(.toServer, into: &out)
        d.finish(.toClient, into: &out)
        return result + out.map { (0, $0) }
    }

    // suricata-verify mqtt-midstream-split.pcap: the capture starts after the handshake, and
    // the server wrote its 5.0 CONNACK in two segments. Nothing more comes from the server
    // until its FIN in frame 15.
    //     2   0.000043   127.0.0.33 → 127.0.0.1    TCP 55 [TCP segment of a reassembled PDU]
    static let connackFrame2 = hex("20")
    //     4   0.000147   127.0.0.33 → 127.0.0.1    MQTT 105 Connect Ack
    static let connackFrame4 = hex("3200002f22000a1200296175746f2d31423433453830302d303845332d334241312d324539372d453941304234303634424635")

    @Test("the framer accepts a candidate that ends at a segment end; without segment ends it waits for the next header")
    func framerAcceptsAtSegmentEnd() {
        let connack = Self.connackFrame2 + Self.connackFrame4
        let expected = MQTTFramer.Step.frame(MQTTFrame(bytes: connack, wireLength: connack.count))

        var marked = MQTTFramer(startsMidStream: true)
        marked.append(Self.connackFrame2, endsSegment: true)
        #expect(marked.next() == .needMore)
        marked.append(Self.connackFrame4, endsSegment: true)
        #expect(marked.next() == expected)
        #expect(marked.next() == .needMore)

        var unmarked = MQTTFramer(startsMidStream: true)
        unmarked.append(Self.connackFrame2)
        unmarked.append(Self.connackFrame4)
        #expect(unmarked.next() == .needMore)
        unmarked.finish()
        #expect(unmarked.next() == expected)
    }

    @Test("mid-stream split capture: the CONNACK comes out with frame 4, which completed it, not with the FIN")
    func midstreamSplitConnack() {
        let result = Self.dissect([
            Segment(frame: 2, direction: .toClient, bytes: Self.connackFrame2),
            Segment(frame: 4, direction: .toClient, bytes: Self.connackFrame4),
        ])
        #expect(result.map(\.frame) == [4])
        #expect(result.first?.pdu.string("type") == "CONNACK")
        #expect(result.first?.pdu.int("topic_alias_maximum") == 10)
        #expect(result.first?.pdu.problemCodes == ["version-guessed"])   // nothing skipped
    }

    // samples/mqtt5-properties.pcap without its first 7 records (`editcap -r F out 8-65`):
    // the publisher's connection (client port 53579) starts mid-stream, on a packet boundary.
    // Every line is `tshark -r out -Y "tcp.stream==0 && mqtt"`; the bytes are its tcp.payload.
    static let trimmedProperties: [Segment] = [
        //  1   0.000000    127.0.0.1 → 127.0.0.1    MQTT 110 Publish Message (id=1) [status/door]
        Segment(frame: 1, direction: .toServer, bytes: hex("332a000b7374617475732f646f6f7200011401010200000e1003000a746578742f706c61696e636c6f736564")),
        //  2   0.000500    127.0.0.1 → 127.0.0.1    MQTT 71 Publish Ack (id=1)
        Segment(frame: 2, direction: .toClient, bytes: hex("4003000110")),
        // 17   0.047063    127.0.0.1 → 127.0.0.1    MQTT 216 Publish Message (id=2) [telemetry/kitchen/temp]
        Segment(frame: 17, direction: .toServer, bytes: hex("329301001674656c656d657472792f6b69746368656e2f74656d7000026e0101020000012c0300106170706c69636174696f6e2f6a736f6e0800157265706c6965732f7064352d7075626c697368657209000a0001636f72722d3432ff230001260004756e6974000763656c7369757326000673656e736f7200076b69746368656e260004756e69740001437b2274223a32312e357d")),
        // 19   0.047189    127.0.0.1 → 127.0.0.1    MQTT 70 Publish Ack (id=2)
        Segment(frame: 19, direction: .toClient, bytes: hex("40020002")),
        // 22   0.049523    127.0.0.1 → 127.0.0.1    MQTT 103 Publish Message []
        Segment(frame: 22, direction: .toServer, bytes: hex("30230000160300106170706c69636174696f6e2f6a736f6e2300017b2274223a32312e377d")),
        // 26   0.093149    127.0.0.1 → 127.0.0.1    MQTT 97 Publish Message (id=4) []
        Segment(frame: 26, direction: .toServer, bytes: hex("341d000000040e01012300012600037365710001337b2274223a32312e397d")),
        // 28   0.093258    127.0.0.1 → 127.0.0.1    MQTT 70 Publish Received (id=4)
        Segment(frame: 28, direction: .toClient, bytes: hex("50020004")),
        // 29   0.093517    127.0.0.1 → 127.0.0.1    MQTT 70 Publish Release (id=4)
        Segment(frame: 29, direction: .toServer, bytes: hex("62020004")),
        // 32   0.093628    127.0.0.1 → 127.0.0.1    MQTT 70 Publish Complete (id=4)
        Segment(frame: 32, direction: .toClient, bytes: hex("70020004")),
        // 47   0.142503    127.0.0.1 → 127.0.0.1    MQTT 99 Disconnect Req
        Segment(frame: 47, direction: .toServer, bytes: hex("e01f041d11000000001f00156c656176696e672c2073656e64206d792077696c6c")),
    ]

    @Test("a capture trimmed mid-connection gives each PDU with the frame that completed it, in time order")
    func trimmedCaptureInTimeOrder() {
        let result = Self.dissect(Self.trimmedProperties)
        #expect(result.map(\.frame) == Self.trimmedProperties.map(\.frame))
        #expect(result.map { $0.pdu.string("type") } == [
            "PUBLISH", "PUBACK", "PUBLISH", "PUBACK", "PUBLISH", "PUBLISH", "PUBREC", "PUBREL", "PUBCOMP", "DISCONNECT",
        ])
        #expect(result.first?.pdu.string("topic") == "status/door")
        #expect(result.allSatisfy { !$0.pdu.problemCodes.contains("skipped-bytes") })
    }

    /// Bytes that are no packet (some shaped like fixed headers, so the hunt has candidates
    /// to weigh), then three packets.
    static func midStream(seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        var garbage = (0..<80).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for i in stride(from: 0, to: garbage.count - 1, by: 9) {
            garbage[i] = [0x20, 0x40, 0x50, 0x62, 0x70, 0x90, 0xB0][Int(rng.next() % 7)]
            garbage[i + 1] = UInt8(rng.next() % 12)
        }
        return garbage + Fixture.publish311QoS1 + Fixture.puback311 + Fixture.pingreq
    }

    /// Steps of a mid-stream framer fed `segments` (each ending a segment), calling `next()`
    /// after every append or only once all are in. The small window makes the hunt drop
    /// scanned bytes (and the segment ends among them) as it goes.
    static func steps(_ segments: [ArraySlice<UInt8>], stepEach: Bool) -> [MQTTFramer.Step] {
        var framer = MQTTFramer(maxHeldPDUBytes: 64, resyncWindowBytes: 16, startsMidStream: true)
        var out: [MQTTFramer.Step] = []
        for segment in segments {
            framer.append(segment, endsSegment: true)
            while stepEach, case let step = framer.next(), step != .needMore { out.append(step) }
        }
        framer.finish()
        while case let step = framer.next(), step != .needMore { out.append(step) }
        return out
    }

    @Test("with segment ends, the result depends on where segments end, not on when next() is called",
          arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func independentOfStepping(seed: UInt64) {
        let stream = Self.midStream(seed: seed)
        let chunked = [1, 3, 5, 7].map { n in stride(from: 0, to: stream.count, by: n).map { stream[$0..<min($0 + n, stream.count)] } }
        let cut = (0...stream.count).map { [stream[..<$0], stream[$0...]] }
        for segments in chunked + cut {
            #expect(Self.steps(segments, stepEach: true) == Self.steps(segments, stepEach: false),
                    "segments \(segments.map(\.count))")
        }
    }

    @Test("mid-stream, every proper prefix of a PDU that ends a segment needs more bytes",
          arguments: FramerTests.streams.flatMap { $0.1 })
    func prefixesAtSegmentEnd(pdu: [UInt8]) {
        for cut in 0..<pdu.count {
            var framer = MQTTFramer(startsMidStream: true)
            framer.append(pdu[..<cut], endsSegment: true)
            #expect(framer.next() == .needMore, "prefix of \(cut) bytes")
        }
    }

    @Test("a segment end is evidence: garbage whose plausible header ends exactly there is taken for a packet")
    func segmentEndIsEvidence() {
        // 40 03 aa bb cc looks like a 5.0 PUBACK; the ff after it is no plausible header.
        let looksLikePuback: [UInt8] = [0x40, 0x03, 0xAA, 0xBB, 0xCC]
        let stream = looksLikePuback + [0xFF, 0xFF] + Fixture.puback311 + Fixture.pingreq
        let real = [MQTTFramer.Step.skipped(7, .resynchronising),
                    .frame(MQTTFrame(bytes: Fixture.puback311, wireLength: 4)),
                    .frame(MQTTFrame(bytes: Fixture.pingreq, wireLength: 2))]
        #expect(frames([stream[...]], midStream: true) == real)
        #expect(Self.steps([stream[..<4], stream[4...]], stepEach: true) == real)
        // Cut right after it, the segment end vouches for it; what follows is then out of step.
        let misled = Self.steps([stream[..<5], stream[5...]], stepEach: true)
        #expect(misled.first == .frame(MQTTFrame(bytes: looksLikePuback, wireLength: 5)))
    }
}
