import AMQP
import AMQPViews
import Capture
import Dissection
import MQTT
import MQTTViews
import Pipeline
import Reassembly
import Render

/// The whole pipeline: the bytes of a capture file → reader → packets → reassembly → MQTT and
/// AMQP dissectors → the analyses that span connections (the MQTT clients and broker model, the
/// AMQP broker model) → every renderer. Small limits, so that limit paths are exercised too.
public func fuzzPipeline(_ data: [UInt8]) {
    var registry = ProtocolRegistry()
    var mqtt = MQTTOptions()
    mqtt.maxHeldPDUBytes = 4096
    var amqp = AMQPOptions()
    amqp.maxHeldFrameBytes = 4096
    registry.register("mqtt", ports: [1883]) { MQTTConnectionDissector(info: $0, options: mqtt) }
    registry.register("amqp", ports: [5672]) { AMQPConnectionDissector(info: $0, options: amqp) }
    let limits = ReassemblyLimits(maxBufferedBytesPerDirection: 8192, maxBufferedBytesTotal: 65_536, maxConnections: 64, idleTimeout: 60)
    let options = RenderOptions()
    var renderers: [any Renderer] = [TextRenderer(options: options), JSONRenderer(options: options), TableRenderer(options: options)]
    var text = ""
    guard var reader = try? CaptureFileReader(bytes: data, name: "fuzz") else { return }
    let pipeline = Pipeline(registry: registry, options: PipelineOptions(limits: limits))
    let spanning = SpanningAnalyses([MQTTClients(), MQTTBroker(), AMQPBroker()])
    try? pipeline.run(&reader) { event in
        if spanning.reads(event) { spanning.observe(event) }
        for i in renderers.indices { renderers[i].render(event, into: &text) }
        if text.utf8.count > 1 << 20 { text.removeAll(keepingCapacity: true) }
        return true
    }
    spanning.finish { record in
        for i in renderers.indices { renderers[i].render(.analysis(record), into: &text) }
    }
    for i in renderers.indices { renderers[i].finish(into: &text) }

    // As the table format runs: facts detail, the frequent PDUs as counted values
    // (`OutputEvent.counted`), into a table and a text renderer (which shows them as boxes).
    mqtt.detail = .facts
    amqp.detail = .facts
    var counting = ProtocolRegistry()
    counting.register("mqtt", ports: [1883]) { MQTTConnectionDissector(info: $0, options: mqtt) }
    counting.register("amqp", ports: [5672]) { AMQPConnectionDissector(info: $0, options: amqp) }
    var table = TableRenderer(options: options), lines = TextRenderer(options: options)
    guard var again = try? CaptureFileReader(bytes: data, name: "fuzz") else { return }
    let counted = Pipeline(registry: counting, options: PipelineOptions(limits: limits, countedPDUs: true))
    // A table's run forwards what the analyses read as other workers would (`forwarded`).
    let spanningCounted = SpanningAnalyses([MQTTClients(), MQTTBroker(), AMQPBroker()])
    try? counted.run(&again) { event in
        if let kept = spanningCounted.forwarded(event) { spanningCounted.observe(kept) }
        table.render(event, into: &text)
        lines.render(event, into: &text)
        if text.utf8.count > 1 << 20 { text.removeAll(keepingCapacity: true) }
        return true
    }
    spanningCounted.finish { table.render(.analysis($0), into: &text) }
    table.finish(into: &text)
}
