import AMQP
import Dissection
import MQTT

// What the decoder targets (`fuzzMQTT`, `fuzzAMQP`) see of a packet: no view at all. The
// dissector hands each typed value to one of these, which checks the value's byte ranges at once
// and gives back a bare PDU (its length and problems, no field tree, no summary): the views (the
// field tree, text, JSON and table counting) are fuzzed by the views target, on the same inputs'
// kind (issue #27 item 9: a decoder target decodes, and renders nothing).

/// MQTT packets checked and given back bare.
struct DecodeOnlyMQTTView: MQTTPacketView {
    func pdu(of packet: MQTTPacket, notes: MQTTPacketNotes, options: MQTTOptions, lineSink: ByteSink?) -> DissectedPDU {
        FuzzPDUCheck.ranges(of: packet)
        return DissectedPDU(protocolName: "mqtt", summary: "", fields: [], problems: packet.problems, wireLength: packet.wireLength)
    }

    /// Never a table's counted values: each packet comes through `pdu(of:...)`.
    func counted(_ packet: MQTTPacket) -> CountedPDU? { nil }

    func box(_ counted: borrowing CountedPDU, type: MQTTPacketType) -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: "", fields: [], wireLength: counted.wireLength)
    }

    func countedBox(_ packet: MQTTPacket) -> DissectedPDU? { nil }

    func skipped(_ count: Int, problems: [Problem]) -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: "", fields: [], problems: problems, wireLength: count)
    }
}

/// AMQP frames, protocol headers and unframed bytes checked and given back bare.
struct DecodeOnlyAMQPView: AMQPFrameView {
    func pdu(of frame: AMQPDecodedFrame, requests: [AMQPMethodID: AMQPMethod], note: AMQPFrameNote,
             options: AMQPOptions) -> DissectedPDU {
        FuzzPDUCheck.ranges(of: frame)
        return DissectedPDU(protocolName: "amqp", summary: "", fields: [], problems: frame.problems, wireLength: frame.frame.wireLength)
    }

    /// Never a table's counted values: each frame comes through `pdu(of:...)`.
    func counted(_ frame: AMQPDecodedFrame, note: AMQPFrameNote) -> CountedPDU? { nil }

    func propertySummary(of header: AMQPContentHeader) -> String { "" }

    func protocolHeader(_ bytes: ArraySlice<UInt8>, header: AMQPProtocolHeader?, problems: [Problem], refused: Bool) -> DissectedPDU {
        DissectedPDU(protocolName: "amqp", summary: "", fields: [], problems: problems, wireLength: bytes.count)
    }

    func unframed(_ count: Int, problems: [Problem]) -> DissectedPDU {
        DissectedPDU(protocolName: "amqp", summary: "", fields: [], problems: problems, wireLength: count)
    }

    func incompleteMessage(_ message: AMQPMessageAssembly, problem: Problem, options: AMQPOptions) -> DissectedPDU {
        DissectedPDU(protocolName: "amqp", summary: "", fields: [], problems: [problem], wireLength: 0)
    }
}
