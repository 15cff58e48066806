import Dissection
@testable import Render
import Testing

/// `OutputEvent.counted` (what a pipeline asked for counted PDUs hands on): text and JSON show
/// each counted PDU exactly as its box, and a table counts a run as it counts the boxes.
@Suite struct CountedEventTests {
    static func run() -> CountedPDUs {
        var publish = CountedPDU(kind: "PUBLISH", wireLength: 31)
        publish.topic = "sensors/kitchen/temp"
        publish.payloadLength = 4
        publish.qos = 1
        publish.retained = true
        let ack = CountedPDU(kind: "PUBACK", wireLength: 4)
        let context = StreamContext(frame: 7, time: Timestamp(seconds: 1_700_000_000, nanoseconds: 5_000), stream: 3,
                                    source: "127.0.0.1:41000", destination: "127.0.0.1:1883")
        return CountedPDUs(context, .toServer, protocolName: "mqtt", [publish, ack, publish][...])
    }

    @Test("a counted PDU's box holds its facts, wire length and kind as summary")
    func boxes() {
        let events = Self.run().pduEvents
        #expect(events.count == 3)
        #expect(events[0].pdu.summary == "PUBLISH")
        #expect(events[0].pdu.wireLength == 31)
        #expect(events[0].pdu.protocolName == "mqtt")
        #expect(events[0].pdu.facts?.topic == "sensors/kitchen/temp")
        #expect(events[0].pdu.facts?.payloadLength == 4)
        #expect(events[0].pdu.facts?.qos == 1)
        #expect(events[0].pdu.facts?.retained == true)
        #expect(events[1].pdu.facts == PDUFacts(kind: "PUBACK"))
        #expect(events.allSatisfy { $0.context.frame == 7 && $0.context.stream == 3 && $0.direction == .toServer })
    }

    @Test("text, JSON and table render a run of counted PDUs as they render its boxes")
    func sameAsBoxes() {
        let run = Self.run()
        let options = RenderOptions()
        var renderers: [(counted: any Renderer, boxes: any Renderer)] = [
            (TextRenderer(options: options), TextRenderer(options: options)),
            (JSONRenderer(options: options), JSONRenderer(options: options)),
            (TableRenderer(options: options), TableRenderer(options: options)),
        ]
        for i in renderers.indices {
            var counted = "", boxes = ""
            renderers[i].counted.render(.counted(run), into: &counted)
            for event in run.pduEvents { renderers[i].boxes.render(.pdu(event), into: &boxes) }
            renderers[i].counted.finish(into: &counted)
            renderers[i].boxes.finish(into: &boxes)
            #expect(!counted.isEmpty)
            #expect(counted == boxes, "\(type(of: renderers[i].counted))")
        }
    }
}
