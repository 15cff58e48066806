import AMQP
import Dissection
import MQTT
import ProtoDissectKit
import Testing

/// The library entry point a codec's test suite uses: a capture's PDUs in order, each MQTT one
/// with its typed packet and the bytes it was read from.
@Suite("CaptureDissection: a capture's PDUs for library users")
struct CaptureDissectionTests {
    @Test("every MQTT PDU of the samples comes with its typed packet, whose bytes are the PDU's wire bytes")
    func typedPacketsWithBytes() throws {
        var mqtt = 0, frames: [Int] = []
        for capture in ["mqtt311-basic.pcap", "mqtt5-properties.pcap", "mqtt31.pcap"] {
            let path = Repo.samples.appendingPathComponent(capture).path
            try CaptureDissection.forEachPDU(inFile: path) { captured in
                frames.append(captured.frame)
                guard captured.pdu.protocolName == "mqtt" else { return true }
                let packet = try #require(captured.mqtt, "frame \(captured.frame): \(captured.pdu.summary)")
                mqtt += 1
                #expect(captured.bytes?.count == captured.pdu.wireLength, "frame \(captured.frame)")
                #expect(packet.wireLength == captured.pdu.wireLength)
                #expect(packet.summary() == captured.pdu.summary)
                if case .publish(let publish) = packet.content {
                    #expect(publish.topicName == captured.pdu.field("topic")?.value.stringValue)
                }
                return true
            }
        }
        #expect(mqtt > 50)
        #expect(frames.count >= mqtt)
    }

    @Test("every AMQP frame of the samples comes with its typed frame: its bytes, method or header, as decoding the bytes alone gives them")
    func typedFramesWithBytes() throws {
        var methods = 0, headers = 0, bodies = 0
        for capture in Repo.sampleCaptures() where capture.hasPrefix("amqp") {
            let path = Repo.samples.appendingPathComponent(capture).path
            try CaptureDissection.forEachPDU(inFile: path) { captured in
                guard captured.pdu.protocolName == "amqp" else { return true }
                guard let frame = captured.amqp else {
                    // Only a protocol header or unframed bytes come without a typed frame.
                    let type = captured.pdu.field("frame_type")?.value
                    #expect(type == .string("protocol_header") || type == .string("unframed"),
                            "frame \(captured.frame): \(captured.pdu.summary)")
                    return true
                }
                #expect(frame.wireLength == captured.pdu.wireLength, "frame \(captured.frame)")
                #expect(captured.bytes == frame.bytes)
                #expect(frame.channel == UInt16(captured.pdu.field("channel")?.value.intValue ?? -1))
                switch frame.content {
                case .method(let method):
                    let method = try #require(method, "frame \(captured.frame): \(captured.pdu.summary)")
                    methods += 1
                    #expect(captured.pdu.summary.hasPrefix(method.id.description) || captured.pdu.field("method")?.value == .string(method.id.description),
                            "frame \(captured.frame): \(method.id) in \(captured.pdu.summary)")
                    // The same typed method as decoding the frame's bytes on their own.
                    if frame.raw.isWhole { #expect(AMQPDecoder.method(frame: frame.bytes).method == method) }
                case .header(let header):
                    let header = try #require(header)
                    headers += 1
                    #expect(header.bodySize.map { Int($0.value) } == captured.pdu.field("body_size")?.value.intValue)
                    if frame.raw.isWhole { #expect(AMQPDecoder.contentHeader(frame: frame.bytes).header == header) }
                case .body:
                    bodies += 1
                    #expect(frame.raw.payload.count <= Int(frame.raw.size))
                case .heartbeat, .other:
                    break
                }
                return true
            }
        }
        #expect(methods > 50 && headers > 10 && bodies > 10, "\(methods) methods, \(headers) headers, \(bodies) bodies")
    }

    @Test("returning false stops the run; an error thrown by the caller comes out of forEachPDU")
    func stopsAndRethrows() throws {
        let path = Repo.samples.appendingPathComponent("mqtt311-basic.pcap").path
        var seen = 0
        try CaptureDissection.forEachPDU(inFile: path) { _ in
            seen += 1
            return seen < 3
        }
        #expect(seen == 3)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try CaptureDissection.forEachPDU(inFile: path) { _ in throw Stop() }
        }
    }

    @Test("a file that is not a capture is an error naming the problem")
    func notACapture() {
        #expect(throws: (any Error).self) {
            try CaptureDissection.forEachPDU(inFile: Repo.samples.appendingPathComponent("expected/mqtt31.txt").path) { _ in true }
        }
    }
}
