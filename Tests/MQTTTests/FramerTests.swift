import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection

@Suite("Framer")
struct FramerTests {
    static let streams: [(String, [[UInt8]])] = [
        ("3.1.1 client", [Fixture.connect311, Fixture.publish311QoS1, Fixture.subscribe311, Fixture.pingreq,
                          Fixture.unsubscribe311, Fixture.pubrel311, Fixture.disconnect311]),
        ("3.1.1 server", [Fixture.connack311Accepted, Fixture.puback311, Fixture.suback311, Fixture.pingresp,
                          Fixture.unsuback311, Fixture.pubcomp311, Fixture.publish311QoS0Retain]),
        ("5.0 client", [Fixture.connect5, Fixture.publish5, Fixture.subscribe5, Fixture.unsubscribe5,
                        Fixture.pubrel5, Fixture.auth5, Fixture.disconnect5]),
        ("5.0 server", [Fixture.connack5, Fixture.puback5Short, Fixture.puback5Reason, Fixture.pubrec5,
                        Fixture.pubcomp5, Fixture.suback5, Fixture.unsuback5, Fixture.disconnect5Short]),
    ]

    static func expected(_ pdus: [[UInt8]]) -> [MQTTFramer.Step] {
        pdus.map { .frame(MQTTFrame(bytes: $0, wireLength: $0.count)) }
    }

    @Test("a stream fed whole gives its PDUs", arguments: streams)
    func whole(name: String, pdus: [[UInt8]]) {
        let stream = pdus.flatMap { $0 }
        #expect(frames([stream[...]]) == Self.expected(pdus))
    }

    @Test("a stream fed byte by byte gives the same PDUs", arguments: streams)
    func byteByByte(name: String, pdus: [[UInt8]]) {
        let stream = pdus.flatMap { $0 }
        let chunks = stream.indices.map { stream[$0..<($0 + 1)] }
        #expect(frames(chunks) == Self.expected(pdus))
    }

    @Test("a stream split at every offset gives the same PDUs", arguments: streams)
    func everySplit(name: String, pdus: [[UInt8]]) {
        let stream = pdus.flatMap { $0 }
        for cut in 0...stream.count {
            #expect(frames([stream[..<cut], stream[cut...]]) == Self.expected(pdus), "split at \(cut)")
        }
    }

    @Test("every proper prefix of a PDU needs more bytes", arguments: streams.flatMap { $0.1 })
    func prefixes(pdu: [UInt8]) {
        for cut in 0..<pdu.count {
            var framer = MQTTFramer()
            framer.append(pdu[..<cut])
            #expect(framer.next() == .needMore, "prefix of \(cut) bytes")
        }
    }

    @Test("an incomplete trailing PDU is reported at finish")
    func incompleteAtFinish() {
        let pdu = Fixture.publish311QoS1
        let steps = frames([pdu[..<10]])
        #expect(steps == [.frame(MQTTFrame(bytes: Array(pdu[..<10]), wireLength: pdu.count, unseenBytes: pdu.count - 10))])
    }

    @Test("an incomplete fixed header at finish is skipped, not framed")
    func incompleteHeaderAtFinish() {
        #expect(frames([[0x30, 0x80][...]]) == [.skipped(2, .incompleteAtEnd)])
    }

    @Test("a PDU larger than the hold limit is held up to the limit and counted")
    func holdLimit() {
        let payload = [UInt8](repeating: 0x5A, count: 10_000)
        let pdu = packet(0x30, str("big") + payload)
        let chunks = stride(from: 0, to: pdu.count, by: 1460).map { pdu[$0..<min($0 + 1460, pdu.count)] }
        let steps = frames(chunks, maxHeld: 4096)
        #expect(steps == [.frame(MQTTFrame(bytes: Array(pdu[..<4096]), wireLength: pdu.count, unheldBytes: pdu.count - 4096))])
    }

    @Test("a gap inside a PDU truncates it and the next PDU is still found")
    func gapInside() {
        let first = Fixture.publish311QoS1
        let second = Fixture.puback311
        var framer = MQTTFramer()
        framer.append(first[..<8])
        framer.gap(5)
        framer.append(first[13...])
        framer.append(second[...])
        #expect(framer.next() == .frame(MQTTFrame(bytes: Array(first[..<8]), wireLength: first.count,
                                                  missingBytes: 5, unheldBytes: first.count - 13)))
        #expect(framer.next() == .frame(MQTTFrame(bytes: second, wireLength: second.count)))
        #expect(framer.next() == .needMore)
    }

    @Test("a gap ending exactly at a PDU's end keeps sync")
    func gapAtEnd() {
        let first = Fixture.publish311QoS1
        var framer = MQTTFramer()
        framer.append(first[..<8])
        framer.gap(first.count - 8)
        framer.append(Fixture.pingreq[...])
        #expect(framer.next() == .frame(MQTTFrame(bytes: Array(first[..<8]), wireLength: first.count, missingBytes: first.count - 8)))
        #expect(framer.next() == .frame(MQTTFrame(bytes: Fixture.pingreq, wireLength: 2)))
    }

    @Test("a gap running past a PDU's end resynchronises on the next plausible packet")
    func gapPastEnd() {
        let first = Fixture.publish311QoS1
        let tail = Array(Fixture.subscribe311.suffix(6))   // end of a lost SUBSCRIBE
        var framer = MQTTFramer()
        framer.append(first[..<8])
        framer.gap(first.count - 8 + 20)
        framer.append(tail + Fixture.puback311 + Fixture.pingreq)
        #expect(framer.next() == .frame(MQTTFrame(bytes: Array(first[..<8]), wireLength: first.count, missingBytes: first.count - 8)))
        #expect(framer.next() == .skipped(20, .lostInGap))
        #expect(framer.next() == .skipped(tail.count, .resynchronising))
        #expect(framer.next() == .frame(MQTTFrame(bytes: Fixture.puback311, wireLength: 4)))
        #expect(framer.next() == .frame(MQTTFrame(bytes: Fixture.pingreq, wireLength: 2)))
        #expect(framer.next() == .needMore)
    }

    @Test("mid-stream start skips the tail of a packet and finds the first real one, however the bytes are split")
    func midStream() {
        let garbage: [UInt8] = Array("emperature\":21.5,\"unit\":\"C\"}".utf8) + [0x00, 0x31, 0x7F]
        let pdus = [Fixture.publish311QoS1, Fixture.puback311, Fixture.pingreq]
        let stream = garbage + pdus.flatMap { $0 }
        let expected: [MQTTFramer.Step] = [.skipped(garbage.count, .resynchronising)] + Self.expected(pdus)
        #expect(frames([stream[...]], midStream: true) == expected)
        #expect(frames(stream.indices.map { stream[$0..<($0 + 1)] }, midStream: true) == expected)
        for cut in 0...stream.count {
            #expect(frames([stream[..<cut], stream[cut...]], midStream: true) == expected, "split at \(cut)")
        }
    }

    @Test("mid-stream start on a clean boundary skips nothing")
    func midStreamClean() {
        let pdus = [Fixture.puback311, Fixture.pingresp]
        #expect(frames([pdus.flatMap { $0 }[...]], midStream: true) == Self.expected(pdus))
    }
}
