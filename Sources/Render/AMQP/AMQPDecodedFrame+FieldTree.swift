import AMQP
import Dissection

/// The field tree and summary line of a frame: a view of its typed values and of what the
/// connection added (`AMQPFrameNote`). It decides nothing about the bytes: the decoder and the
/// connection found the problems.
extension AMQPDecodedFrame {
    /// The frame's PDU: its fields, then the note's, its summary line and its problems.
    /// `requests`: the peer's last requests on the channel, which a close explanation and a SASL
    /// response read.
    func dissected(options: AMQPOptions, requests: [AMQPMethodID: AMQPMethod],
                   note: AMQPFrameNote = AMQPFrameNote()) -> DissectedPDU {
        let size = Int(frame.size)
        var fields: [Field] = []
        // Room for the frame's own fields, a method's four or a content header's five, and the
        // frame end: growing an array of fields one append at a time reallocates it.
        fields.reserveCapacity(frame.type == .body ? 6 : 9)
        // Text lines only where they are printed (`AMQPOptions.textLines`).
        let textLines = options.textLines
        fields.append(Field("frame_type", "Type", .string(frame.type.name ?? "unknown"), line: textLines ? AMQPTextLines.frameType(frame.type) : nil,
                            range: 0..<1))
        fields.append(Field("channel", "Channel", .int(Int(frame.channel)), range: 1..<3))
        fields.append(Field("size", "Length", .int(size), range: 3..<7))
        var summary: String

        switch frame.type {
        case .method:
            guard let result = method else { summary = "method (truncated)"; break }
            // The arguments as a list and by name, made here once from the typed method.
            let arguments = result.arguments
            result.method?.appendFields(to: &fields, arguments: arguments, argumentsRange: result.argumentsRange, options: options)
            if let spec = result.spec {
                let values = AMQPFrameSummary.readsValuesByName(spec) ? AMQPArgumentValues(arguments, of: spec) : AMQPArgumentValues()
                summary = options.summaryDetail ? AMQPFrameSummary.summary(spec, arguments, values: values) : spec.fullName
                if spec.classID == 10, spec.methodID == 11 || spec.methodID == 21,
                   let user = AMQPSASL.user(mechanism: values.string("mechanism") ?? requests[.connectionStartOK]?.mechanism,
                                            response: values["response"]) {
                    fields.append(Field("sasl_user", "SASL user", .string(user)))
                }
                fields += AMQPFrameSummary.connectionSummaryFields(spec, values, depthLimit: options.effectiveTableDepth)
                if let reason = AMQPFrameSummary.reasonField(values) { fields.append(reason) }
                if spec.classID == 10, spec.methodName == "blocked" {
                    let reason = values.string("reason").map { " (\($0))" } ?? ""
                    fields.append(Field("explanation", "Explanation",
                                        .string("The broker stopped reading from this connection's publishers because a resource alarm is in effect\(reason), such as low memory or disk space; publishes wait until connection.unblocked.")))
                } else if let method = result.method, let explanation = AMQPFrameDecoder.explain(spec, method, requests: requests) {
                    fields.append(Field("explanation", "Explanation", .string(explanation)))
                }
            } else if let id = result.id {
                summary = id.description
            } else {
                summary = "method (truncated)"
            }
        case .header:
            guard let result = header else { summary = "content header ?"; break }
            result.typed?.header.appendFields(to: &fields, options: options)
            summary = AMQPFrameSummary.headerSummary(result, detailed: options.summaryDetail)
        case .body:
            let body = Preview.value(of: frame.payload, length: size, limit: options.bodyPreviewBytes)
            fields.append(Field("body", "Body", body, range: 7..<(7 + frame.payload.count)))
            // `body_length`, not `length`, which is the whole frame's wire length at the top level.
            fields.append(Field("body_length", "Body length", .int(size), range: 3..<7))
            summary = AMQPFrameSummary.bodySummary(frame, detailed: options.summaryDetail)
        case .heartbeat:
            summary = "heartbeat"
        default:
            summary = "frame type \(frame.type)"
            if !frame.payload.isEmpty {
                fields.append(Field("payload", "Payload", Preview.value(of: frame.payload, length: size, limit: options.bodyPreviewBytes),
                                    range: 7..<(7 + frame.payload.count)))
            }
        }

        if let end = frame.frameEnd {
            // A text-only field: not made where no text tree is printed.
            if textLines {
                fields.append(Field("frame_end", "Frame-End", .int(Int(end)), line: AMQPTextLines.frameEnd(end),
                                    range: (7 + size)..<(8 + size), textOnly: true))
            }
            if end != AMQPSpec.frameEnd { summary += " [bad frame-end]" }
        }
        if !frame.isWhole {
            summary += " [truncated]"
        }
        note.appendFields(to: &fields, options: options)
        return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems,
                            wireLength: frame.wireLength)
    }
}

extension AMQPFrameNote {
    /// The note's fields, after the frame's own: the queue (and the deliveries a `multiple`
    /// settlement covered), the publish's number or what a confirm covers, the message completed.
    func appendFields(to fields: inout [Field], options: AMQPOptions) {
        if let attribution { fields += attribution.fields }
        if let publishSequence {
            fields.append(Field("publish_seq", "Publish sequence number (confirm mode)", .int(publishSequence)))
        }
        if let confirm {
            // Written as bytes, made a String once (interpolating cost several times as much).
            var text = ByteSink(capacity: 80)
            if confirm.acknowledged { text.literal("confirms ") } else { text.literal("rejects (the broker could not take responsibility for) ") }
            if confirm.multiple { text.literal("publishes up to #") } else { text.literal("publish #") }
            text.append(confirm.deliveryTag)
            fields.append(Field("confirms", "Confirms", .string(text.take())))
        }
        if analysis {
            if let settled = attribution?.settled {
                var children = settled.frames.fields(deliveries: true)
                if settled.requeue { children.append(Field("requeue", "Requeued", .bool(true))) }
                fields.append(Field("ack", "Acknowledgement", children: children))
            }
            if let frame = attribution?.redeliveryOf {
                fields.append(Field("redelivery_of", "Redelivery Of Frame", .int(frame)))
            }
            if let link {
                if linkIsPublish {
                    if let queues = link.queues {
                        fields.append(Field("routing", "Routing", children: [
                            Field("queues", "Queues", children: queues.map { Field("queue", "Queue", .string($0)) }, isList: true),
                            Field("unroutable", "Unroutable", .bool(queues.isEmpty)),
                        ]))
                    }
                    if let frame = link.confirmFrame {
                        var children = [Field("confirm_frame", "Confirmed In Frame", .int(frame))]
                        if let latency = link.confirmLatency { children.append(Field("latency_us", "Until The Confirm (µs)", .int(latency))) }
                        if link.nacked { children.append(Field("nack", "Nacked", .bool(true))) }
                        fields.append(Field("confirm", "Confirm", children: children))
                    }
                } else if let frame = link.ackFrame {
                    var children = [Field("ack_frame", "Acknowledged In Frame", .int(frame))]
                    if let latency = link.ackLatency { children.append(Field("latency_us", "Until The Acknowledgement (µs)", .int(latency))) }
                    if link.rejected { children.append(Field("rejected", "Rejected", .bool(true))) }
                    if link.requeued { children.append(Field("requeue", "Requeued", .bool(true))) }
                    fields.append(Field("ack", "Acknowledgement", children: children))
                }
            }
            if let answers {
                fields.append(Field("answers", "Answers", children: [
                    Field("method", "Method", .string(answers.method.description)), Field("frame", "In Frame", .int(answers.frame)),
                ]))
            }
            if let transaction {
                fields.append(Field("transaction", "Transaction", children: [
                    Field("publishes", "Publishes", .int(transaction.publishes)),
                    Field("acknowledgements", "Acknowledgements", .int(transaction.acknowledgements)),
                ]))
            }
            if let held {
                fields.append(Field("held", "Held back", children: [
                    Field("since_frame", "Since Frame", .int(held.since)), Field("duration_us", "For (µs)", .int(held.duration)),
                ]))
            }
            if let confirmed = confirm?.confirmed {
                let children = confirmed.fields(deliveries: false)
                fields.append(Field("confirm", "Confirm", children: children))
            }
        }
        if let message { fields.append(message.field(options: options)) }
    }

    /// What text shows in brackets after the summary (`acknowledges #60 in 574 µs`), one entry
    /// each; empty without the analysis. `acknowledges`: whether the frame is a basic.ack (else a
    /// nack or reject).
    func words(acknowledges: Bool) -> [String] {
        guard analysis else { return [] }
        var words: [String] = []
        if let settled = attribution?.settled {
            let verb = acknowledges ? "acknowledges" : "rejects"
            var text = settled.frames.words(verb, "deliveries")
            if settled.requeue { text += ", requeued" }
            words.append(text)
        }
        if let frame = attribution?.redeliveryOf { words.append("redelivery of #\(frame)") }
        if let answers { words.append("answers \(answers.method) #\(answers.frame)") }
        if let transaction {
            func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
            words.append((transaction.committed ? "commits " : "rolls back ") + count(transaction.publishes, "publish", "publishes")
                         + " and " + count(transaction.acknowledgements, "acknowledgement", "acknowledgements"))
        }
        if let held { words.append("resumes \(held.what), held since #\(held.since) for \(latencyText(microseconds: held.duration))") }
        if let link {
            if linkIsPublish {
                if let queues = link.queues {
                    if queues.isEmpty {
                        let (exchange, key) = published ?? ("?", "?")
                        words.append(exchange.isEmpty ? "UNROUTABLE: no queue is named '\(key)'"
                                                      : "UNROUTABLE: no binding on exchange '\(exchange)' matches '\(key)'")
                    } else {
                        words.append("routed to " + queues.map { "'\($0)'" }.joined(separator: ", "))
                    }
                }
                if let frame = link.confirmFrame {
                    let after = link.confirmLatency.map { " in \(latencyText(microseconds: $0))" } ?? ""
                    words.append(link.nacked ? "rejected by the broker's nack #\(frame)\(after)" : "confirmed by #\(frame)\(after)")
                }
            } else if let frame = link.ackFrame {
                let after = link.ackLatency.map { " in \(latencyText(microseconds: $0))" } ?? ""
                words.append((link.rejected ? "rejected by #\(frame)" : "acked by #\(frame)") + after + (link.requeued ? ", requeued" : ""))
            }
        }
        if let confirm, let confirmed = confirm.confirmed {
            let verb = confirm.acknowledged ? "confirms" : "rejects"
            words.append(confirmed.words(verb, "publishes"))
        }
        return words
    }
}

extension AMQPCovered {
    /// The members of an `ack` (`deliveries`) or a `confirm` (else): how many, the first's
    /// frame, the last's when more than one, the time since the oldest. Keys and labels are
    /// literals (an interpolated name cost more than the fields).
    func fields(deliveries: Bool) -> [Field] {
        var fields: [Field] = []
        fields.reserveCapacity(4)
        if deliveries {
            fields.append(Field("deliveries", "Deliveries", .int(count)))
            fields.append(Field("delivery_frame", "Delivery In Frame", .int(firstFrame)))
            if count > 1 { fields.append(Field("last_delivery_frame", "Last Delivery In Frame", .int(lastFrame))) }
            fields.append(Field("latency_us", "Since The Delivery (µs)", .int(latency)))
        } else {
            fields.append(Field("publishes", "Publishes", .int(count)))
            fields.append(Field("publish_frame", "Publish In Frame", .int(firstFrame)))
            if count > 1 { fields.append(Field("last_publish_frame", "Last Publish In Frame", .int(lastFrame))) }
            fields.append(Field("latency_us", "Since The Publish (µs)", .int(latency)))
        }
        return fields
    }

    /// `acknowledges #13 in 1.00 ms`, or for several `acknowledges 2 deliveries, #17 to #18, the
    /// oldest after 2.00 ms`.
    func words(_ verb: String, _ plural: String) -> String {
        var out = ByteSink(capacity: 80)
        out.append(verb)
        if count == 1 {
            out.literal(" #")
            out.append(firstFrame)
            out.literal(" in ")
        } else {
            out.literal(" ")
            out.append(count)
            out.literal(" ")
            out.append(plural)
            out.literal(", #")
            out.append(firstFrame)
            out.literal(" to #")
            out.append(lastFrame)
            out.literal(", the oldest after ")
        }
        out.appendLatency(microseconds: latency)
        return out.take()
    }
}
