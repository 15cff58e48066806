import AMQP
import Dissection

/// The AMQP framer and decoder (methods, content headers, field tables, message assembly) on one
/// connection's bytes, both directions (`FuzzedConnection`): every frame decoded into its typed
/// values once and their byte ranges checked (`FuzzPDUCheck`), no view made
/// (`DecodeOnlyAMQPView`): the views (every frame's tree, text, JSON, what a table counts) and
/// the connection's analysis have targets of their own, and this one runs thousands of inputs a
/// second (docs/fuzzing.md).
///
/// Selector bits:
/// - `0x04`: small limits (a frame held to 64 bytes, field tables 2 deep, 4 deliveries tracked
///   per channel, no body preview), so the limit paths run on short inputs;
/// - `0x08`: one PDU per `receive` call, the rest through `receiveMore`, as the pipeline asks for them;
/// - `0x40`: the connection started before the capture (no protocol header expected).
public func fuzzAMQP(_ data: [UInt8]) {
    let input = FuzzedConnection(data)
    // A table's detail (no text lines, no property summaries); the view checks each typed frame.
    // Decoding alone, as in the MQTT target: the analysis (deliveries, acknowledgements,
    // confirms, broker events) runs in the views and pipeline targets.
    var options = amqpOptions(input.selector, detail: .facts, textLines: false)
    options.analysis = false
    var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: input.selector & 0x40 != 0, serverPort: 5672),
                                            options: options, view: DecodeOnlyAMQPView())
    input.feed(to: &dissector, limit: input.selector & 0x08 != 0 ? 1 : .max) { FuzzPDUCheck.ranges($0) }
}

/// The AMQP options a selector asks for (see `fuzzAMQP`), with `detail`; without `textLines`, no
/// text lines and no summary detail either.
func amqpOptions(_ selector: UInt8, detail: PDUDetail, textLines: Bool = true) -> AMQPOptions {
    var options = selector & 0x04 != 0
        ? AMQPOptions(bodyPreviewBytes: 0, maxHeldFrameBytes: 64, maxFieldTableDepth: 2, maxTrackedDeliveries: 4)
        : AMQPOptions(maxHeldFrameBytes: 4096)
    options.detail = detail
    options.textLines = textLines
    options.summaryDetail = textLines
    return options
}
