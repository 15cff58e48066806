import Foundation
import Dissection
@testable import Render
import Testing

// The context bytes the JSON and text renderers reuse from PDU to PDU (`ContextCache`).

@Suite("Context lines")
struct ContextLineTests {
    static let options = RenderOptions(showSecrets: false, color: false, showTree: false, maxTableRows: 10)

    static func pdu(_ name: String) -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: name, fields: [Field("type", "Type", .string(name))], wireLength: 2)
    }

    /// Several PDUs of one segment, then PDUs that differ from the one before in one part of
    /// their context each: the written context (reused from PDU to PDU) follows every change.
    static let events: [OutputEvent] = {
        let t1 = Timestamp(seconds: 1_700_000_000, nanoseconds: 1_000)
        let t2 = Timestamp(seconds: 1_700_000_000, nanoseconds: 2_000)
        let a = StreamContext(frame: 7, time: t1, stream: 0, source: "127.0.0.1:5000", destination: "127.0.0.1:1883")
        var otherWay = a
        otherWay.source = a.destination
        otherWay.destination = a.source
        var otherStream = a
        otherStream.stream = 1
        var otherFrame = a
        otherFrame.frame = 8
        var otherTime = a
        otherTime.time = t2
        // Only the receiver differs; then the same endpoints as `a` in a pair of their own.
        var otherPeer = a
        otherPeer.destination = "127.0.0.1:1884"
        let samePair = StreamContext(frame: 7, time: t1, stream: 0, source: "127.0.0.1:5000", destination: "127.0.0.1:1883")
        return [a, a, otherWay, otherStream, otherFrame, otherTime, a, otherPeer, samePair, otherPeer].enumerated().map { i, ctx in
            .pdu(ctx, ctx.source == a.source ? .toServer : .toClient, pdu("P\(i)"))
        }
    }()

    /// The lines a renderer writes for `events`, rendered one after another into one buffer.
    static func lines(_ renderer: inout some Renderer) -> [Substring] {
        var out: [UInt8] = []
        for e in events { renderer.render(e, into: &out) }
        return String(decoding: out, as: UTF8.self).split(separator: "\n")
    }

    @Test("JSON: each PDU's frame, time, stream, source and destination, also when PDUs share them")
    func json() throws {
        var renderer = JSONRenderer(options: Self.options)
        let lines = Self.lines(&renderer)
        #expect(lines.count == Self.events.count)
        for (line, event) in zip(lines, Self.events) {
            guard case .pdu(let e) = event else { continue }
            let ctx = e.context
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["frame"] as? Int == ctx.frame)
            #expect(object["stream"] as? Int == ctx.stream)
            #expect(object["src"] as? String == ctx.source)
            #expect(object["dst"] as? String == ctx.destination)
            #expect(object["time"] as? String == ctx.time.iso8601)
        }
    }

    @Test("text: each PDU's header line starts with its own frame, time, endpoints and stream")
    func text() {
        var renderer = TextRenderer(options: Self.options)
        let lines = Self.lines(&renderer)
        #expect(lines.count == Self.events.count)
        for (line, event) in zip(lines, Self.events) {
            guard case .pdu(let e) = event else { continue }
            let ctx = e.context, pdu = e.pdu
            #expect(line == "#\(ctx.frame) \(ctx.time.timeOfDay) \(ctx.source) → \(ctx.destination) [stream \(ctx.stream)] MQTT \(pdu.summary)")
        }
    }
}
