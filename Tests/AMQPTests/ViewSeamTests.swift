import Testing
@testable import AMQP
@testable import AMQPViews
import Dissection

/// The AMQP module shows nothing itself: its dissector hands every frame, with what the
/// connection noted of it, to the view it was given (issue #27 item 3), and outputs what the
/// view makes.
@Suite("The AMQP dissector's view")
struct AMQPViewSeamTests {
    /// The standard view, with each PDU's summary marked by what the dissector handed over.
    struct MarkingView: AMQPFrameView {
        let standard = AMQPStandardView()

        func pdu(of frame: AMQPDecodedFrame, requests: [AMQPMethodID: AMQPMethod], note: AMQPFrameNote,
                 options: AMQPOptions) -> DissectedPDU {
            var pdu = standard.pdu(of: frame, requests: requests, note: note, options: options)
            let completed = note.message.map { " completes \($0.method.fullName)" } ?? ""
            pdu.summary = "marked \(frame.method?.spec?.fullName ?? frame.frame.type.name ?? "?")\(completed)"
            return pdu
        }
        func counted(_ frame: AMQPDecodedFrame, note: AMQPFrameNote) -> CountedPDU? { standard.counted(frame, note: note) }
        func propertySummary(of header: AMQPContentHeader) -> String { "marked properties" }
        func protocolHeader(_ bytes: ArraySlice<UInt8>, header: AMQPProtocolHeader?, problems: [Problem], refused: Bool) -> DissectedPDU {
            DissectedPDU(protocolName: "amqp", summary: "marked header refused=\(refused)", fields: [], problems: problems,
                         wireLength: bytes.count)
        }
        func unframed(_ count: Int, problems: [Problem]) -> DissectedPDU {
            DissectedPDU(protocolName: "amqp", summary: "marked unframed \(count)", fields: [], problems: problems, wireLength: count)
        }
        func incompleteMessage(_ message: AMQPMessageAssembly, problem: Problem, options: AMQPOptions) -> DissectedPDU {
            DissectedPDU(protocolName: "amqp", summary: "marked incomplete \(message.method.fullName)", fields: [],
                         problems: [problem], wireLength: 0)
        }
    }

    func dissect(_ bytes: [UInt8], from direction: Direction, midStream: Bool = false) -> [DissectedPDU] {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: midStream, serverPort: 5672), options: AMQPOptions(),
                                        view: MarkingView())
        var out: [DissectedPDU] = []
        d.receive(bytes[...], from: direction, into: &out)
        d.finish(direction, into: &out)
        return out
    }

    @Test("protocol headers and frames are the view's, with what the connection noted")
    func framesComeFromTheView() {
        let bytes = Wire.protocolHeader + Wire.publish(channel: 1, exchange: "x", routingKey: "k")
            + Wire.contentHeader(channel: 1, bodySize: 2) + Wire.body(channel: 1, "hi")
        let out = dissect(bytes, from: .toServer)
        #expect(out.map(\.summary) == ["marked header refused=false", "marked basic.publish", "marked header",
                                       "marked body completes basic.publish"])
    }

    @Test("the connection asks the view once for a header's property summary and keeps it for the message")
    func propertySummaryComesFromTheView() {
        var options = AMQPOptions()
        options.analysis = false
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: options,
                                        view: MarkingView())
        var out: [DissectedPDU] = []
        let bytes = Wire.protocolHeader + Wire.publish(channel: 1, exchange: "x", routingKey: "k")
            + Wire.contentHeader(channel: 1, bodySize: 2) + Wire.body(channel: 1, "hi")
        d.receive(bytes[...], from: .toServer, into: &out)
        #expect(out.last?.field("message")?.children.first { $0.key == "properties" }?.value == .string("marked properties"))
    }

    @Test("a refused protocol header, unframed bytes and a message cut short are the view's")
    func otherUnitsComeFromTheView() {
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions(),
                                        view: MarkingView())
        var out: [DissectedPDU] = []
        d.receive(Wire.protocolHeader[...], from: .toServer, into: &out)
        d.receive([0x41, 0x4D, 0x51, 0x50, 1, 1, 0, 10][...], from: .toClient, into: &out)
        #expect(out.map(\.summary) == ["marked header refused=false", "marked header refused=true"])

        var cut = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: AMQPOptions(),
                                          view: MarkingView())
        var frames: [DissectedPDU] = [], end: [DissectedPDU] = []
        cut.receive((Wire.protocolHeader + Wire.publish(channel: 1, exchange: "x", routingKey: "k"))[...], from: .toServer, into: &frames)
        cut.finish(.toServer, into: &end)
        #expect(end.map(\.summary) == ["marked incomplete basic.publish"])
        #expect(end.first?.problems.map(\.code) == [.messageIncomplete])

        let lone = dissect(Wire.publish(channel: 1, exchange: "x", routingKey: "k"), from: .toServer, midStream: true)
        #expect(lone.map(\.summary) == ["marked basic.publish"])

        let garbage = dissect(Array(repeating: 0x00, count: 3), from: .toServer, midStream: true)
        #expect(garbage.map(\.summary) == ["marked unframed 3"])
    }

    @Test("the standard view says a server's header refuses the client's, malformed or not")
    func refusedHeaderSummary() {
        let view = AMQPStandardView()
        let malformed = view.protocolHeader(Array("HTTP/1.1".utf8)[...], header: nil, problems: [], refused: true)
        #expect(malformed.summary == "protocol header (malformed) (server refuses the client's protocol version)")
        let other = [0x41, 0x4D, 0x51, 0x50, 1, 1, 0, 10] as [UInt8]
        let older = view.protocolHeader(other[...], header: AMQPProtocolHeader(other[...]), problems: [], refused: true)
        #expect(older.summary.hasSuffix(" (server refuses the client's protocol version)"))
        #expect(view.protocolHeader(other[...], header: AMQPProtocolHeader(other[...]), problems: [], refused: false).summary
                    .contains("refuses") == false)
    }
}
