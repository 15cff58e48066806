import AMQP
import Dissection
import MQTT

/// Checks of decoded PDUs that hold for any input, so the decoder targets find wrong field
/// trees as well as crashes: a failed check stops the process (libFuzzer saves the input).
public enum FuzzPDUCheck {
    /// Every field's and problem's byte range lies inside the PDU (offsets from its first byte,
    /// up to its wire length).
    public static func ranges(_ pdus: [DissectedPDU]) {
        for pdu in pdus {
            let length = pdu.wireLength
            if length < 0 { fatalError(described(pdu, "negative wire length \(length)")) }
            for problem in pdu.problems { within(problem.range, length, described(pdu, "problem \(problem.code)")) }
            pdu.fields.forEach { check($0, length, pdu) }
        }
    }

    private static func check(_ field: Field, _ length: Int, _ pdu: DissectedPDU) {
        within(field.range, length, described(pdu, "field \(field.key)"))
        field.children.forEach { check($0, length, pdu) }
    }

    /// Stops the process when `range` reaches outside `0..<length`; `what` names it.
    private static func within(_ range: Range<Int>?, _ length: Int, _ what: @autoclosure () -> String) {
        if let range, range.lowerBound < 0 || range.upperBound > length {
            fatalError("\(what()) covers \(range), outside 0..<\(length)")
        }
    }

    private static func described(_ pdu: DissectedPDU, _ what: String) -> String {
        "\(pdu.protocolName) PDU \"\(pdu.summary)\": \(what)"
    }

    /// The same of a typed MQTT packet, for the decoder target, which makes no field tree: its
    /// problems, remaining length, undecoded bytes, and a PUBLISH's or acknowledgement's fields.
    static func ranges(of packet: MQTTPacket) {
        let length = packet.wireLength
        func check(_ range: Range<Int>?, _ what: @autoclosure () -> String) {
            within(range, length, "MQTT \(packet.type): \(what())")
        }
        if length < packet.bytes.count { fatalError("MQTT \(packet.type): \(packet.bytes.count) bytes held, \(length) on the wire") }
        for problem in packet.problems { check(problem.range, "problem \(problem.code)") }
        check(packet.remainingLength?.range, "remaining length")
        check(packet.unparsed, "undecoded bytes")
        switch packet.content {
        case .publish(let publish):
            check(publish.topic?.range, "topic")
            check(publish.packetID?.range, "packet identifier")
            check(publish.topicAlias?.range, "topic alias")
            if let payload = publish.payload {
                check(payload.start..<payload.start + payload.length, "payload")
                if payload.heldCount > payload.length { fatalError("MQTT PUBLISH: payload holds \(payload.heldCount) of \(payload.length) bytes") }
            }
        case .publishResponse(let response):
            check(response.packetID?.range, "packet identifier")
        default:
            break
        }
    }

    /// The same of a typed AMQP frame: its problems, its method's arguments, its content
    /// header's field ranges (offsets from the frame's first byte).
    static func ranges(of decoded: AMQPDecodedFrame) {
        let length = decoded.frame.wireLength
        func check(_ range: Range<Int>?, _ what: @autoclosure () -> String) {
            within(range, length, "AMQP frame: \(what())")
        }
        for problem in decoded.problems { check(problem.range, "problem \(problem.code)") }
        if let method = decoded.method {
            // An empty range (no arguments read) has no place to be wrong.
            if !method.argumentsRange.isEmpty { check(method.argumentsRange, "the arguments") }
            for argument in method.arguments { check(argument.range, "an argument") }
            for problem in method.problems { check(problem.range, "problem \(problem.code)") }
        }
        if let header = decoded.header {
            for problem in header.problems { check(problem.range, "problem \(problem.code)") }
        }
    }
}
