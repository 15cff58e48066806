import AMQP
import AMQPViews
import Dissection
import MQTT
import MQTTViews
import Render

/// The views: one connection's bytes (`FuzzedConnection`) decoded by the MQTT or the AMQP
/// dissector, then rendered as the program pairs detail and format: the whole field tree as text,
/// JSON and table; the decoders' written text and JSON trees (`PDUDetail.text`, `.json`) by the
/// text and JSON renderers; counted facts (`PDUDetail.facts`, `OutputEvent.counted`) by the
/// table and the text renderer. Every JSON line must be one well-formed JSON value (RFC 8259),
/// all output UTF-8 (`FuzzOutputCheck`), and every field inside its PDU (`FuzzPDUCheck`).
///
/// Selector bits:
/// - `0x20`: AMQP (the other bits as `fuzzAMQP` reads them), else MQTT (as `fuzzMQTT`: `0x03`
///   the assumed version);
/// - `0x04`: small limits, as in the decoder targets;
/// - `0x18`: the detail: the field tree, facts, the written text tree, the written JSON tree;
/// - `0x40`: the connection started before the capture;
/// - `0x80`: secrets shown, ANSI colour, an 8-byte hex preview (else the defaults).
public func fuzzViews(_ data: [UInt8]) {
    let input = FuzzedConnection(data)
    let selector = input.selector
    let render = selector & 0x80 != 0 ? RenderOptions(showSecrets: true, color: true, hexPreviewBytes: 8) : RenderOptions()
    let detail: PDUDetail
    switch (selector >> 3) & 0x03 {
    case 0: detail = .tree
    case 1: detail = .facts
    case 2: detail = .text
    default: detail = .json
    }
    let port: UInt16 = selector & 0x20 != 0 ? 5672 : 1883
    let info = ConnectionInfo(startedMidStream: selector & 0x40 != 0, serverPort: port)
    if selector & 0x20 != 0 {
        var dissector = AMQPConnectionDissector(info: info, options: amqpOptions(selector, detail: detail))
        renderViews(input, &dissector, protocolName: "amqp", port: port, detail: detail, options: render)
    } else {
        var dissector = MQTTConnectionDissector(info: info, options: mqttOptions(selector, detail: detail))
        renderViews(input, &dissector, protocolName: "mqtt", port: port, detail: detail, options: render)
    }
}

/// The renderers that show `detail`, each fed the dissector's events and checked.
private func renderViews<D: StreamDissector>(_ input: FuzzedConnection, _ dissector: inout D, protocolName: String,
                                             port: UInt16, detail: PDUDetail, options: RenderOptions) {
    var views = FuzzViewSet(options: options, detail: detail)
    var frame = 0
    let client = "10.0.0.1:40000", server = "10.0.0.2:\(port)"
    func context(_ direction: Direction) -> StreamContext {
        let time = Timestamp(seconds: 1_700_000_000 + Int64(frame), nanoseconds: 123_456_789)
        return direction == .toServer
            ? StreamContext(frame: frame, time: time, stream: 0, source: client, destination: server)
            : StreamContext(frame: frame, time: time, stream: 0, source: server, destination: client)
    }
    // With facts, as the pipeline runs a table: the frequent PDUs as runs of counted values, the
    // others as boxes, in order. Otherwise every PDU a box.
    let counts = detail == .facts && dissector.makesCountedPDUs
    var batch = PDUBatch(), boxes: [DissectedPDU] = []
    func emit(_ direction: Direction) {
        FuzzPDUCheck.ranges(boxes)
        FuzzPDUCheck.ranges(batch.full)
        for pdu in boxes { views.render(.pdu(context(direction), direction, pdu)) }
        boxes.removeAll(keepingCapacity: true)
        var start = 0
        for box in 0...batch.full.count {
            let end = box < batch.full.count ? batch.boxPlaces[box] : batch.counted.count
            if start < end {
                views.render(.counted(CountedPDUs(context(direction), direction, protocolName: batch.protocolName,
                                                  batch.counted[start..<end])))
            }
            start = end
            if box < batch.full.count { views.render(.pdu(context(direction), direction, batch.full[box])) }
        }
        batch.removeAll()
    }
    input.forEachRecord { record in
        frame += 1
        switch record {
        case .gap(let count, let direction):
            views.render(.streamNote(context(direction), Problem(.warning, "gap", "\(count) bytes missing from the capture (fuzz)")))
            dissector.gap(count, in: direction, into: &boxes)
            emit(direction)
        case .bytes(let bytes, let direction):
            var more = counts ? dissector.receive(bytes, from: direction, into: &batch, limit: 64)
                              : dissector.receive(bytes, from: direction, into: &boxes, limit: 64)
            emit(direction)
            while more {
                more = counts ? dissector.receiveMore(from: direction, into: &batch, limit: 64)
                              : dissector.receiveMore(from: direction, into: &boxes, limit: 64)
                emit(direction)
            }
        }
    }
    for direction in [Direction.toServer, .toClient] {
        frame += 1
        dissector.finish(direction, into: &boxes)
        emit(direction)
    }
    views.render(.connectionClosed(ConnectionSummary(
        stream: 0, client: client, server: server, protocolName: protocolName,
        firstSeen: Timestamp(seconds: 1_700_000_000, nanoseconds: 0), lastSeen: Timestamp(seconds: 1_700_000_000 + Int64(frame), nanoseconds: 0),
        bytesToServer: 0, bytesToClient: 0, closeReason: "end of capture")))
    views.finish()
}

/// The renderers for one detail, with their output checked after each event.
private struct FuzzViewSet {
    var text: TextRenderer?
    var json: JSONRenderer?
    var table: TableRenderer?
    var sink = ByteSink()

    init(options: RenderOptions, detail: PDUDetail) {
        switch detail {
        case .tree:
            text = TextRenderer(options: options)
            json = JSONRenderer(options: options)
            table = TableRenderer(options: options)
        case .facts:
            text = TextRenderer(options: options)
            table = TableRenderer(options: options)
        case .text:
            text = TextRenderer(options: options)
        case .json:
            json = JSONRenderer(options: options)
        }
    }

    mutating func render(_ event: OutputEvent) {
        if text != nil {
            text!.render(event, into: &sink)
            FuzzOutputCheck.utf8(sink.bytes, "text")
            sink.removeAll()
        }
        if json != nil {
            json!.render(event, into: &sink)
            FuzzOutputCheck.jsonLines(sink.bytes)
            sink.removeAll()
        }
        table?.render(event, into: &sink)
    }

    mutating func finish() {
        var out = ""
        text?.finish(into: &out)
        json?.finish(into: &out)
        table?.finish(into: &out)
    }
}
