import Dissection
import MQTT

/// The words and the `flow` object of a PDU's step in its message flow (`MQTTFlows`).
extension MQTTFlowNote {
    /// What text shows in brackets after the summary: `acknowledges #8 in 61 µs`.
    public var text: String {
        var out = ByteSink(capacity: 64)
        write(into: &out)
        return out.take()
    }

    /// `text`, appended to `out` piece by piece (no string is made per piece).
    public func write(into out: inout ByteSink) {
        switch state {
        case .sent:
            var first = true
            if let reusedFrom {
                first = false
                out.literal("packet identifier ")
                out.append(packetID)
                out.literal(" reused while the flow of #")
                out.append(reusedFrom)
                out.literal(" is open")
            }
            if let over = overReceiveMaximum {
                if !first { out.literal("; ") }
                first = false
                out.append(over.inFlight)
                out.literal(" in flight, over the Receive Maximum of ")
                out.append(over.maximum)
            }
            if let later {
                if !first { out.literal("; ") }
                later.write(qos: qos ?? 1, into: &out)
            }
        case .retransmitted:
            out.literal("retransmission of ")
            writePublish(into: &out)
            writeAfter(into: &out)
        case .acknowledged:
            out.literal("acknowledges ")
            writePublish(into: &out)
            writeAfter(into: &out)
        case .received:
            out.literal("receives ")
            writePublish(into: &out)
            writeAfter(into: &out)
        case .released:
            out.literal("releases ")
            writePublish(into: &out)
            if let previousFrame {
                out.literal(" (PUBREC #")
                out.append(previousFrame)
                out.literal(")")
            }
        case .completed:
            out.literal("completes the QoS 2 flow of ")
            writePublish(into: &out)
            writeAfter(into: &out)
        case .refused:
            out.literal("refuses ")
            writePublish(into: &out)
            out.literal(": ")
            if let reasonCode {
                out.append("0x\(String(reasonCode.rawValue, radix: 16, uppercase: true)) \(reasonCode.name(in: packetType))")
            }
        case .unexpected:
            out.literal("no PUBLISH with packet identifier ")
            out.append(packetID)
            out.literal(" in flight")
            if mayPredateCapture { out.literal(" (it may predate the capture)") }
        }
    }

    /// `#N`, the PUBLISH's frame, or `?`.
    private func writePublish(into out: inout ByteSink) {
        if let publishFrame {
            out.literal("#")
            out.append(publishFrame)
        } else {
            out.literal("?")
        }
    }

    /// ` in 61 µs`, where the latency is known.
    private func writeAfter(into out: inout ByteSink) {
        guard let latency else { return }
        out.literal(" in ")
        out.appendLatency(microseconds: latency)
    }

    /// The `flow` member of the PDU's object (JSON) and its node in the tree (text).
    public var field: Field {
        var children: [Field] = []
        children.reserveCapacity(6)
        children.append(Field("state", "State", .string(state.rawValue)))
        children.append(Field("packet_id", "Packet Identifier", .int(packetID)))
        if let qos { children.append(Field("qos", "QoS", .int(qos))) }
        if let publishFrame { children.append(Field("publish_frame", "PUBLISH In Frame", .int(publishFrame))) }
        if let previousFrame { children.append(Field("previous_frame", "Previous Step In Frame", .int(previousFrame))) }
        if let latency { children.append(Field("latency_us", "Since The PUBLISH (µs)", .int(latency))) }
        if let reusedFrom { children.append(Field("reused_from", "Identifier Still In Use By Frame", .int(reusedFrom))) }
        if let over = overReceiveMaximum {
            children.append(Field("in_flight", "In Flight", .int(over.inFlight)))
            children.append(Field("receive_maximum", "Receive Maximum", .int(over.maximum)))
        }
        if let reasonCode { children.append(Field("reason_code", "Reason Code", .int(Int(reasonCode.rawValue)))) }
        if let later {
            // Time to the acknowledgement: `latency_us`, as on the acknowledgement itself.
            if let frame = later.ackFrame { children.append(Field("ack_frame", "Acknowledged In Frame", .int(frame))) }
            if let latency = later.ackLatency { children.append(Field("latency_us", "Until The Acknowledgement (µs)", .int(latency))) }
            if let frame = later.completeFrame { children.append(Field("complete_frame", "Completed In Frame", .int(frame))) }
            if let latency = later.completeLatency {
                children.append(Field("complete_latency_us", "Until The PUBCOMP (µs)", .int(latency)))
            }
            if later.refused { children.append(Field("refused", "Refused", .bool(true))) }
            if let missing = later.neverSent { children.append(Field("never_sent", "Never Sent", .string(missing.name))) }
        }
        if mayPredateCapture { children.append(Field("may_predate_capture", "May Predate The Capture", .bool(true))) }
        return Field("flow", "Flow", children: children)
    }
}

extension MQTTFlowLinks.Link {
    /// What text shows of a PUBLISH's flow from a first pass (`acknowledged by #9 in 61 µs`),
    /// appended to `out`.
    func write(qos: Int, into out: inout ByteSink) {
        var first = true
        if let frame = ackFrame {
            first = false
            let verb: StaticString = refused && completeFrame == nil ? "refused by #" : qos == 2 ? "received by #" : "acknowledged by #"
            Self.write(verb, frame: frame, latency: ackLatency, into: &out)
        }
        if let frame = completeFrame {
            if !first { out.literal(", ") }
            first = false
            Self.write(refused ? "refused by #" : "completed by #", frame: frame, latency: completeLatency, into: &out)
        }
        if let missing = neverSent {
            if !first { out.literal(", ") }
            out.literal("flow incomplete: ")
            out.append(missing.name)
            out.literal(" never sent")
        }
    }

    /// One step: `acknowledged by #9`, then ` in 61 µs` where the latency is known.
    private static func write(_ verb: StaticString, frame: Int, latency: Int?, into out: inout ByteSink) {
        out.literal(verb)
        out.append(frame)
        guard let latency else { return }
        out.literal(" in ")
        out.appendLatency(microseconds: latency)
    }
}

extension MQTTFlowLinks.Delivery {
    /// What text shows of a client PUBLISH's deliveries from a first pass.
    var text: String {
        "delivered on \(connections) connection\(connections == 1 ? "" : "s"), the first after \(latencyText(microseconds: firstLatency))"
    }

    /// `delivered`: a member of the PUBLISH's object (JSON) and a node of its tree (text).
    var field: Field {
        Field("delivered", "Delivered", children: [Field("connections", "Connections", .int(connections)),
                                                   Field("first_latency_us", "First Delivery After (µs)", .int(firstLatency))])
    }
}

/// The words and the JSON of a PDU's note from the connection analysis (`MQTTConnectionWatch`).
extension MQTTWatchNote {
    /// What text shows in brackets after the summary.
    public var text: String {
        switch self {
        case .pingAnswered(let request, let latency): return "answers PINGREQ #\(request) in \(latencyText(microseconds: latency))"
        case .session(let present): return present ? "session resumed" : "no session stored: a new one"
        }
    }

    /// `ping` (PINGRESP): the PINGREQ answered and the round trip, a member of the PDU's object
    /// (JSON) and a node of its tree (text); the session has none (the CONNACK's `session_present`
    /// says it).
    var field: Field? {
        guard case .pingAnswered(let request, let latency) = self else { return nil }
        return Field("ping", "Ping", children: [Field("request_frame", "PINGREQ In Frame", .int(request)),
                                                Field("latency_us", "Round Trip (µs)", .int(latency))])
    }
}
