import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection

/// The MQTT module shows nothing itself: its dissector hands every packet, with what the
/// analyses say of it, to the view it was given (issue #27 item 3), and outputs what the view
/// makes.
@Suite("The MQTT dissector's view")
struct ViewSeamTests {
    /// The standard view, with each PDU's summary marked by what the dissector handed over.
    struct MarkingView: MQTTPacketView {
        let standard = MQTTStandardView()

        func pdu(of packet: MQTTPacket, notes: MQTTPacketNotes, options: MQTTOptions, lineSink: ByteSink?) -> DissectedPDU {
            var pdu = standard.pdu(of: packet, notes: notes, options: options, lineSink: nil)
            pdu.summary = "marked \(packet.type.name) flow=\(notes.flow.map { $0.state.rawValue } ?? "-")"
            return pdu
        }
        func counted(_ packet: MQTTPacket) -> CountedPDU? {
            standard.counted(packet).map { c in
                var c = c
                c.kind = "marked " + c.kind
                return c
            }
        }
        func box(_ counted: borrowing CountedPDU, type: MQTTPacketType) -> DissectedPDU { standard.box(counted, type: type) }
        func countedBox(_ packet: MQTTPacket) -> DissectedPDU? { standard.countedBox(packet) }
        func skipped(_ count: Int, problems: [Problem]) -> DissectedPDU {
            DissectedPDU(protocolName: "mqtt", summary: "marked skipped \(count)", fields: [], problems: problems, wireLength: count)
        }
    }

    func connection(_ options: MQTTOptions = MQTTOptions()) -> MQTTConnectionDissector {
        MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883), options: options, view: MarkingView())
    }

    @Test("every PDU is the view's, made with the flow analysis's note of it")
    func pdusComeFromTheView() {
        var d = connection()
        var out: [DissectedPDU] = []
        d.receive(Fixture.connect311[...], from: .toServer, into: &out)
        d.receive(Fixture.connack311Accepted[...], from: .toClient, into: &out)
        d.receive(Fixture.publish311QoS1[...], from: .toServer, into: &out)
        d.receive(Fixture.puback311[...], from: .toClient, into: &out)
        #expect(out.map(\.summary) == ["marked CONNECT flow=-", "marked CONNACK flow=-", "marked PUBLISH flow=sent",
                                       "marked PUBACK flow=acknowledged"])
        // The dissector still adds what is not the view's to say: the typed packet.
        #expect(out.allSatisfy { $0.packet is MQTTPacket })
    }

    @Test("bytes seen but decoded as no packet are the view's entry, with the dissector's problems")
    func skippedBytesComeFromTheView() {
        var d = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 1883), options: MQTTOptions(),
                                        view: MarkingView())
        var out: [DissectedPDU] = []
        d.receive([0xFF, 0xFF, 0xFF][...], from: .toServer, into: &out)
        d.finish(.toServer, into: &out)
        #expect(out.last?.summary == "marked skipped 3")
        #expect(out.last?.problems.isEmpty == false)
    }

    @Test("a table's counted packets are the view's")
    func countedPacketsComeFromTheView() {
        var options = MQTTOptions()
        options.detail = .facts
        var d = connection(options)
        var batch = PDUBatch()
        _ = d.receive((Fixture.connect311 + Fixture.publish311QoS1)[...], from: .toServer, into: &batch, limit: .max)
        #expect(batch.counted.map(\.kind) == ["marked PUBLISH"])
    }
}
