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
            if let later { words.append(later.text(qos: qos ?? 1)) }
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
    /// What text shows of a PUBLISH's flow from a first pass (`acknowledged by #9 in 61 µs`).
    func text(qos: Int) -> String {
        var words: [String] = []
        let ackName = qos == 2 ? "received" : "acknowledged"
        if let frame = ackFrame {
            let after = ackLatency.map { " in \(latencyText(microseconds: $0))" } ?? ""
            words.append(refused && completeFrame == nil ? "refused by #\(frame)\(after)" : "\(ackName) by #\(frame)\(after)")
        }
        if let frame = completeFrame {
            let after = completeLatency.map { " in \(latencyText(microseconds: $0))" } ?? ""
            words.append(refused ? "refused by #\(frame)\(after)" : "completed by #\(frame)\(after)")
        }
        if let missing = neverSent { words.append("flow incomplete: \(missing.name) never sent") }
        return words.joined(separator: ", ")
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
