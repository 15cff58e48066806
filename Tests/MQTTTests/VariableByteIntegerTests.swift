import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection

@Suite("Remaining length (Variable Byte Integer)")
struct VariableByteIntegerTests {
    static let boundaries: [(Int, [UInt8])] = [
        (0, [0x00]),
        (127, [0x7F]),
        (128, [0x80, 0x01]),
        (16_383, [0xFF, 0x7F]),
        (16_384, [0x80, 0x80, 0x01]),
        (2_097_151, [0xFF, 0xFF, 0x7F]),
        (2_097_152, [0x80, 0x80, 0x80, 0x01]),
        (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
    ]

    @Test("decodes and encodes the 1- to 4-byte boundaries", arguments: boundaries)
    func boundary(value: Int, bytes: [UInt8]) {
        #expect(VariableByteInteger.decode(bytes[...]) == .value(value, length: bytes.count, isMinimal: true))
        #expect(VariableByteInteger.encode(value) == bytes)
    }

    @Test("a proper prefix of a multi-byte encoding needs more bytes", arguments: boundaries.filter { $0.1.count > 1 })
    func prefixNeedsMore(value: Int, bytes: [UInt8]) {
        for cut in 0..<bytes.count {
            #expect(VariableByteInteger.decode(bytes[..<cut]) == .needMore)
        }
    }

    @Test("rejects a 5-byte encoding")
    func fiveBytes() {
        #expect(VariableByteInteger.decode([0xFF, 0xFF, 0xFF, 0xFF, 0x7F][...]) == .tooLong)
        #expect(VariableByteInteger.decode([0x80, 0x80, 0x80, 0x80, 0x01][...]) == .tooLong)
    }

    @Test("marks non-minimal encodings", arguments: [
        ([UInt8]([0x80, 0x00]), 0),
        ([0xFF, 0x00], 127),
        ([0x80, 0x80, 0x00], 0),
        ([0x81, 0x80, 0x80, 0x00], 1),
    ])
    func nonMinimal(bytes: [UInt8], value: Int) {
        #expect(VariableByteInteger.decode(bytes[...]) == .value(value, length: bytes.count, isMinimal: false))
    }

    /// The decoder, from a slice and from a pointer, against the spec read byte by byte (MQTT 5.0
    /// §1.5.5): seven bits a byte, low bits first, the high bit saying another byte follows, at
    /// most four bytes; an encoding is minimal when a multi-byte one does not end in a zero byte.
    @Test("every sequence of up to six bytes of an alphabet of edge values, at every offset: the spec's reading, from a slice and from a pointer")
    func againstTheSpec() {
        func spec(_ bytes: [UInt8], at offset: Int) -> VariableByteInteger.Decoded {
            var value = 0
            for k in 0..<4 {
                guard offset + k < bytes.count else { return .needMore }
                let b = bytes[offset + k]
                value += Int(b & 0x7F) * (1 << (7 * k))
                if b < 0x80 { return .value(value, length: k + 1, isMinimal: k == 0 || b != 0) }
            }
            return .tooLong
        }
        // Bytes that end, continue with a zero or a non-zero low part.
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF]
        var sequences: [[UInt8]] = [[]]
        var checked = 0
        for _ in 0..<6 {
            sequences = sequences.flatMap { s in alphabet.map { s + [$0] } }
            for bytes in sequences {
                for offset in 0...bytes.count {
                    let expected = spec(bytes, at: offset)
                    #expect(VariableByteInteger.decode(bytes[...], at: offset) == expected, "\(bytes) at \(offset)")
                    // A slice not starting at 0: offsets count from its start.
                    let padded = [0xEE] + bytes
                    #expect(VariableByteInteger.decode(padded[1...], at: offset) == expected, "\(bytes) at \(offset)")
                    let fromPointer = bytes.withUnsafeBufferPointer { VariableByteInteger.decode($0, at: offset) }
                    #expect(fromPointer == expected, "\(bytes) at \(offset)")
                    checked += 1
                }
            }
        }
        #expect(checked > 50_000)
    }

    @Test("a packet with a non-minimal remaining length is flagged but decoded")
    func nonMinimalPacket() {
        let pdu = decode([
            0xC0,        // PINGREQ
            0x80, 0x00,  // remaining length 0 in two bytes
        ], .v3_1_1)
        #expect(pdu.string("type") == "PINGREQ")
        #expect(pdu.int("remaining_length") == 0)
        #expect(pdu.errorCodes == ["non-minimal-remaining-length"])
        #expect(pdu.field("remaining_length")?.range == 1..<3)
    }

    @Test("a fifth remaining-length byte makes a malformed packet and the framer resynchronises")
    func fifthByteInStream() {
        let stream: [UInt8] = [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01] + Fixture.pingreq + Fixture.pingresp
        var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883),
                                                options: MQTTOptions(assumedVersion: .v3_1_1))
        var out: [DissectedPDU] = []
        dissector.receive(stream[...], from: .toServer, into: &out)
        dissector.finish(.toServer, into: &out)
        #expect(out.count == 3)
        #expect(out.first?.problemCodes.contains("remaining-length-too-long") == true)
        #expect(out.dropFirst().map { $0.string("type") } == ["PINGREQ", "PINGRESP"])
        // the one byte (0x01) between the bad header and PINGREQ is reported as skipped
        #expect(out[1].problemCodes == ["skipped-bytes"])
    }

    @Test("the framer frames PUBLISH packets whose remaining length sits on each boundary",
          arguments: [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152])
    func framerBoundaries(remaining: Int) {
        // QoS 0 PUBLISH: 2-byte topic length, topic "t" (or nothing for lengths under 3), payload.
        var body: [UInt8] = []
        if remaining >= 3 {
            body = str("t") + [UInt8](repeating: 0x41, count: remaining - 3)
        } else {
            body = [UInt8](repeating: 0, count: remaining)
        }
        let pdu = packet(0x30, body)
        let steps = frames([pdu[...]], maxHeld: 4 << 20)
        #expect(steps == [.frame(MQTTFrame(bytes: pdu, wireLength: pdu.count))])
        #expect(pdu.count == 1 + VariableByteInteger.encode(remaining).count + remaining)
    }

    @Test("the largest remaining length is framed without holding more than the limit")
    func largestRemainingLength() {
        var framer = MQTTFramer(maxHeldPDUBytes: 1024)
        framer.append([0x30, 0xFF, 0xFF, 0xFF, 0x7F] + str("t") + [1, 2, 3])
        #expect(framer.next() == .needMore)
        framer.finish()
        guard case .frame(let frame) = framer.next() else {
            Issue.record("expected a frame")
            return
        }
        #expect(frame.wireLength == 5 + 268_435_455)
        #expect(frame.bytes.count == 11)               // 5 header bytes + topic (3) + 3 payload bytes
        #expect(frame.unseenBytes == 268_435_455 - 6)
        let pdu = MQTTDecoder.decode(frame, version: .v3_1_1, state: &dummyState)
        #expect(pdu.int("payload_length") == 268_435_455 - 3)
        #expect(pdu.problemCodes.contains("incomplete"))
    }
}

nonisolated(unsafe) var dummyState = MQTTDirectionState()
