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
