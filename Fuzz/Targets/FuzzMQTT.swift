import Dissection
import MQTT
import MQTTViews

/// The MQTT framer and decoder on one connection's bytes, both directions (`FuzzedConnection`),
/// every PDU decoded into its typed packet and its byte ranges checked (`FuzzPDUCheck`), no view
/// made (`DecodeOnlyMQTTView`): the views (field tree, text, JSON, table) have a target of their
/// own, and this one runs thousands of inputs a second (docs/fuzzing.md).
///
/// Selector bits:
/// - `0x03`: the version assumed until a CONNECT says otherwise: none (guessed), 3.1, 3.1.1, 5.0;
/// - `0x04`: small limits (a PDU held to 16 bytes, a 16-byte resynchronisation window, no
///   payload preview), so the skip and resynchronisation paths run on short inputs;
/// - `0x08`: one PDU per `receive` call, the rest through `receiveMore`, as the pipeline asks for them;
/// - `0x40`: the connection started before the capture (the framer hunts for a boundary).
public func fuzzMQTT(_ data: [UInt8]) {
    let input = FuzzedConnection(data)
    // Decoding alone: the analysis (flows, the connection watch) runs in the views and pipeline
    // targets, the pipeline's rendering its records too. The view checks each typed packet.
    var options = mqttOptions(input.selector, detail: .tree, textLines: false)
    options.analysis = false
    var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: input.selector & 0x40 != 0, serverPort: 1883),
                                            options: options, view: DecodeOnlyMQTTView())
    input.feed(to: &dissector, limit: input.selector & 0x08 != 0 ? 1 : .max) { FuzzPDUCheck.ranges($0) }
}

/// The MQTT options a selector asks for (see `fuzzMQTT`), with `detail` and `textLines`.
func mqttOptions(_ selector: UInt8, detail: PDUDetail, textLines: Bool = true) -> MQTTOptions {
    let versions: [MQTTVersion?] = [nil, .v3_1, .v3_1_1, .v5]
    var options = MQTTOptions(assumedVersion: versions[Int(selector & 0x03)])
    if selector & 0x04 != 0 {
        options.maxHeldPDUBytes = 16
        options.resyncWindowBytes = 16
        options.payloadPreviewBytes = 0
    } else {
        options.maxHeldPDUBytes = 4096
    }
    options.detail = detail
    options.textLines = textLines
    return options
}
