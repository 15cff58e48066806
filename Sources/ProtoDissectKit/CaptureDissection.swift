import AMQP
import AMQPViews
import Capture
import Dissection
import MQTT
import MQTTViews
import Pipeline

/// One PDU of a capture: the decoded PDU with where and when it was seen.
public struct CapturedPDU: Sendable {
    /// 1-based number of the capture record that completed the PDU (tshark's frame number).
    public var frame: Int
    public var time: Timestamp
    /// Connection number, in order of first appearance, from 0.
    public var connection: Int
    /// Whether the client sent it.
    public var direction: Direction
    /// `ip:port` of the sender and the receiver.
    public var source: String
    public var destination: String
    /// The PDU: field tree, summary, problems, and the decoder's typed value (`packet`).
    public var pdu: DissectedPDU

    /// The typed MQTT packet, when the PDU is one.
    public var mqtt: MQTTPacket? { pdu.packet as? MQTTPacket }
    /// The typed AMQP frame, when the PDU is one (a protocol header or unframed bytes have none).
    public var amqp: AMQPFrame? { pdu.packet as? AMQPFrame }
    /// The PDU's bytes as captured (a prefix when the capture cut it short), where the decoder
    /// gives a typed value.
    public var bytes: ArraySlice<UInt8>? { pdu.packet?.bytes }
}

/// Opens a capture and dissects it as the `proto-dissect` command does, handing each PDU to
/// the caller in capture order: what a codec's test suite needs to compare its own decoding
/// with this one on real traffic.
///
/// ```swift
/// try CaptureDissection.forEachPDU(inFile: "session.pcap") { captured in
///     if let publish = captured.mqtt, let bytes = captured.bytes { /* feed my codec `bytes` */ }
///     if let method = captured.amqp?.method { /* compare with my codec's method */ }
///     return true  // false stops the run
/// }
/// ```
public enum CaptureDissection {
    /// The dissectors of the command line: MQTT on port 1883, AMQP on 5672 (and on other ports
    /// by detection of the first bytes).
    public static func standardRegistry(mqtt: MQTTOptions = MQTTOptions(), amqp: AMQPOptions = AMQPOptions()) -> ProtocolRegistry {
        var registry = ProtocolRegistry()
        registry.register("mqtt", ports: [1883]) { info in MQTTConnectionDissector(info: info, options: mqtt) }
        registry.register("amqp", ports: [5672]) { info in AMQPConnectionDissector(info: info, options: amqp) }
        return registry
    }

    /// Every PDU of the pcap or pcapng file at `path`, in capture order, until `body` returns false.
    /// Throws when the file cannot be read as a capture; a capture damaged part way gives the
    /// PDUs before the damage, then throws.
    public static func forEachPDU(inFile path: String, registry: ProtocolRegistry = standardRegistry(),
                                  options: PipelineOptions = PipelineOptions(),
                                  _ body: (CapturedPDU) throws -> Bool) throws {
        var source = try CaptureFileReader(path: path)
        let pipeline = Pipeline(registry: registry, options: options)
        var failure: Error?
        try pipeline.run(&source) { event in
            guard case .pdu(let e) = event else { return true }
            let captured = CapturedPDU(frame: e.context.frame, time: e.context.time, connection: e.context.stream,
                                       direction: e.direction, source: e.context.source,
                                       destination: e.context.destination, pdu: e.pdu)
            do { return try body(captured) } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }
}
