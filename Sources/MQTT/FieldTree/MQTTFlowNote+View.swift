import Dissection

/// The words and the `flow` object of a PDU's step in its message flow (`MQTTFlows`).
extension MQTTFlowNote {
    /// What text shows in brackets after the summary: `acknowledges #8 in 61 µs`.
    public var text: String {
        let after = latency.map { " in \(latencyText(microseconds: $0))" } ?? ""
        let publish = publishFrame.map { "#\($0)" } ?? "?"
        switch state {
        case .sent:
            var words: [String] = []
            if let reusedFrom { words.append("packet identifier \(packetID) reused while the flow of #\(reusedFrom) is open") }
            if let over = overReceiveMaximum { words.append("\(over.inFlight) in flight, over the Receive Maximum of \(over.maximum)") }
            return words.joined(separator: "; ")
        case .retransmitted: return "retransmission of \(publish)\(after)"
        case .acknowledged: return "acknowledges \(publish)\(after)"
        case .received: return "receives \(publish)\(after)"
        case .released: return "releases \(publish)" + (previousFrame.map { " (PUBREC #\($0))" } ?? "")
        case .completed: return "completes the QoS 2 flow of \(publish)\(after)"
        case .refused:
            let code = reasonCode.map { "0x\(String($0.rawValue, radix: 16, uppercase: true)) \($0.name(in: packetType))" } ?? ""
            return "refuses \(publish): \(code)"
        case .unexpected:
            return "no PUBLISH with packet identifier \(packetID) in flight" + (mayPredateCapture ? " (it may predate the capture)" : "")
        }
    }

    /// The `flow` member of the PDU's object, as JSON and as the tree's node, for a PDU of
    /// `detail`: JSON needs only the first (written with `scratch`), text only the second.
    func fields(for detail: PDUDetail, scratch: inout ByteSink) -> [Field] {
        switch detail {
        case .json: return [jsonField(scratch: &scratch)]
        case .text: return [treeField]
        default: return [field]
        }
    }

    /// The `flow` member written as JSON once (a JSON-only field): the tree's node, written
    /// member by member, cost a few thousand instructions a PDU.
    func jsonField(scratch out: inout ByteSink) -> Field {
        out.removeAll()
        out.literal("{\"state\":\"")
        out.append(state.rawValue)
        out.literal("\",\"packet_id\":")
        out.append(packetID)
        if let qos {
            out.literal(",\"qos\":")
            out.append(qos)
        }
        if let publishFrame {
            out.literal(",\"publish_frame\":")
            out.append(publishFrame)
        }
        if let previousFrame {
            out.literal(",\"previous_frame\":")
            out.append(previousFrame)
        }
        if let latency {
            out.literal(",\"latency_us\":")
            out.append(latency)
        }
        if let reusedFrom {
            out.literal(",\"reused_from\":")
            out.append(reusedFrom)
        }
        if let over = overReceiveMaximum {
            out.literal(",\"in_flight\":")
            out.append(over.inFlight)
            out.literal(",\"receive_maximum\":")
            out.append(over.maximum)
        }
        if let reasonCode {
            out.literal(",\"reason_code\":")
            out.append(Int(reasonCode.rawValue))
        }
        if mayPredateCapture { out.literal(",\"may_predate_capture\":true") }
        out.literal("}")
        return Field("flow", "Flow", .json(Array(out.bytes)), jsonOnly: true)
    }

    /// The tree's node alone (text).
    var treeField: Field {
        var f = field
        f.textOnly = true
        return f
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
        if mayPredateCapture { children.append(Field("may_predate_capture", "May Predate The Capture", .bool(true))) }
        return Field("flow", "Flow", children: children)
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

    /// `ping` (PINGRESP): the PINGREQ answered and the round trip; the session has no member of
    /// its own (the CONNACK's `session_present` says it).
    func fields(for detail: PDUDetail, scratch out: inout ByteSink) -> [Field] {
        guard case .pingAnswered(let request, let latency) = self else { return [] }
        switch detail {
        case .json:
            out.removeAll()
            out.literal("{\"request_frame\":")
            out.append(request)
            out.literal(",\"latency_us\":")
            out.append(latency)
            out.literal("}")
            return [Field("ping", "Ping", .json(Array(out.bytes)), jsonOnly: true)]
        default:
            var f = Field("ping", "Ping", children: [Field("request_frame", "PINGREQ In Frame", .int(request)),
                                                     Field("latency_us", "Round Trip (µs)", .int(latency))])
            if case .text = detail { f.textOnly = true }
            return [f]
        }
    }
}
