import Dissection

/// Turns one framed unit into a `DissectedPDU`, without connection state. The connection
/// dissector adds what needs state (frame-max, message assembly, request context).
struct AMQPFrameDecoder {
    /// A decoded frame with what the connection state needs from it.
    struct Decoded {
        var pdu: DissectedPDU
        var method: AMQPMethodDecoder.Result?
        var header: AMQPContentHeaderDecoder.Result?
    }

    let options: AMQPOptions

    /// `strings`: the connection's recent short strings, which the facts fast path takes its
    /// strings from (`decodeFacts`); a caller that keeps none passes an empty one.
    func decode(_ unit: AMQPFramedUnit, requests: [AMQPMethodID: AMQPArgumentValues] = [:], strings: inout RecentStrings) -> Decoded {
        switch unit {
        case .protocolHeader(let bytes, let problems):
            return Decoded(pdu: decodeProtocolHeader(bytes, problems: problems))
        case .unframed(let count, let problems):
            // Text only: the count is the PDU's wire length, which JSON gives as the top-level
            // `length`; an `amqp.length` would repeat it under a name that means a body's length.
            let fields = [Field("frame_type", "Type", .string("unframed")),
                          Field("length", "Length", .int(count), textOnly: true)]
            let summary = problems.last?.message ?? "\(count) bytes not framed"
            return Decoded(pdu: DissectedPDU(protocolName: "amqp", summary: summary, fields: fields,
                                             problems: problems, wireLength: count))
        case .frame(let framed):
            let frame = framed.frame, problems = framed.problems
            return decode(frame, problems: problems, requests: requests, strings: &strings)
        }
    }

    func decodeProtocolHeader(_ bytes: ArraySlice<UInt8>, problems: [Problem]) -> DissectedPDU {
        var problems = problems
        var fields = [Field("frame_type", "Type", .string("protocol_header"), range: 0..<bytes.count)]
        fields.append(Field("protocol", "Protocol", .string(AMQPText.shortString(bytes.prefix(4))), range: 0..<4))
        guard let header = AMQPProtocolHeader(bytes) else {
            problems.append(Problem(.error, .badProtocolHeader, "not an AMQP protocol header", reference: "AMQP 0-9-1 §4.2.2"))
            return DissectedPDU(protocolName: "amqp", summary: "protocol header (malformed)", fields: fields,
                                problems: problems, wireLength: bytes.count)
        }
        let o = header.octets
        fields.append(Field("version", "Version", .string(String(header.versionName.dropFirst(5))),
                            line: "Version: \(header.versionName) (\(o.0) \(o.1) \(o.2) \(o.3))", range: 4..<8))
        var summary = "protocol header \(header.versionName)"
        switch header.family {
        case .amqp091:
            break
        case .amqp0x:
            problems.append(Problem(.note, .otherVersion,
                                    "\(header.versionName) is not 0-9-1; the frames are decoded as 0-9-1, which older versions resemble but do not match",
                                    reference: "AMQP 0-9-1 §4.2.2", range: 4..<8))
        case .amqp10:
            summary += " (AMQP 1.0, not dissected)"
            problems.append(Problem(.note, .amqp10,
                                    "\(header.versionName) is a different protocol from 0-9-1; the rest of this direction is not dissected",
                                    reference: "AMQP 1.0 §2.2", range: 0..<8))
        case .unknown:
            problems.append(Problem(.warning, .unknownVersion, "unknown AMQP protocol version",
                                    reference: "AMQP 0-9-1 §4.2.2", range: 4..<8))
        }
        return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems, wireLength: bytes.count)
    }

    func decode(_ frame: AMQPRawFrame, problems framing: [Problem], requests: [AMQPMethodID: AMQPArgumentValues] = [:],
                strings: inout RecentStrings) -> Decoded {
        if options.detail == .facts, framing.isEmpty, let fast = decodeFacts(frame, strings: &strings) { return fast }
        var problems = framing
        let size = Int(frame.size)
        var fields: [Field] = []
        // Room for the frame's own fields, a method's four or a content header's five, and the
        // frame end: growing an array of fields one append at a time reallocates it.
        fields.reserveCapacity(frame.type == .body ? 6 : 9)
        fields.append(Field("frame_type", "Type", .string(frame.type.name ?? "unknown"), line: AMQPTextLines.frameType(frame.type), range: 0..<1))
        fields.append(Field("channel", "Channel", .int(Int(frame.channel)), range: 1..<3))
        fields.append(Field("size", "Length", .int(size), range: 3..<7))
        var summary: String
        var decoded = Decoded(pdu: DissectedPDU(protocolName: "amqp", summary: "", fields: [], wireLength: frame.wireLength))

        switch frame.type {
        case .method:
            let result = AMQPMethodDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
            result.method?.appendFields(to: &fields, arguments: result.arguments, argumentsRange: result.argumentsRange, options: options)
            problems += result.problems
            if let spec = result.spec {
                summary = options.summaryDetail ? AMQPMethodDecoder.summary(spec, result.values) : spec.fullName
                if spec.classID == 10, spec.methodID == 11 || spec.methodID == 21,
                   let user = AMQPSASL.user(mechanism: result.values.string("mechanism") ?? requests[.connectionStartOK]?.string("mechanism"),
                                            response: result.values["response"]) {
                    fields.append(Field("sasl_user", "SASL user", .string(user)))
                }
                fields += AMQPFrameDecoder.connectionSummaryFields(spec, result.values, depthLimit: options.effectiveTableDepth)
                if let reason = AMQPFrameDecoder.reasonField(result.values) { fields.append(reason) }
                if spec.classID == 10, spec.methodName == "blocked" {
                    let reason = result.values.string("reason").map { " (\($0))" } ?? ""
                    fields.append(Field("explanation", "Explanation",
                                        .string("The broker stopped reading from this connection's publishers because a resource alarm is in effect\(reason), such as low memory or disk space; publishes wait until connection.unblocked.")))
                } else if let explanation = explain(spec, result.values, requests: requests) {
                    fields.append(Field("explanation", "Explanation", .string(explanation)))
                }
                // AMQP 0-9-1 §4.2.3 / §2.3.5: channel 0 is the connection's; connection methods use no other.
                if (spec.classID == 10) != (frame.channel == 0) {
                    problems.append(Problem(.error, .wrongChannel,
                                            spec.classID == 10
                                                ? "\(spec.fullName) must be sent on channel 0, not \(frame.channel)"
                                                : "\(spec.fullName) cannot be sent on channel 0, which belongs to the connection",
                                            reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
                }
            } else if let id = result.id {
                summary = id.description
            } else {
                summary = "method (truncated)"
            }
            decoded.method = result
        case .header:
            let result = AMQPContentHeaderDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
            result.header?.appendFields(to: &fields, options: options)
            problems += result.problems
            summary = AMQPFrameDecoder.headerSummary(result, detailed: options.summaryDetail)
            if frame.channel == 0 {
                problems.append(Problem(.error, .wrongChannel, "content header on channel 0, which carries no content",
                                        reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
            decoded.header = result
        case .body:
            let body = Preview.value(of: frame.payload, length: size, limit: options.bodyPreviewBytes)
            fields.append(Field("body", "Body", body, range: 7..<(7 + frame.payload.count)))
            // `body_length`, not `length`, which is the whole frame's wire length at the top level.
            fields.append(Field("body_length", "Body length", .int(size), range: 3..<7))
            summary = AMQPFrameDecoder.bodySummary(frame, detailed: options.summaryDetail)
            if frame.channel == 0 {
                problems.append(Problem(.error, .wrongChannel, "content body on channel 0, which carries no content",
                                        reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
        case .heartbeat:
            summary = "heartbeat"
            // AMQP 0-9-1 §4.2.7: heartbeat frames have channel 0 and no payload.
            if frame.channel != 0 {
                problems.append(Problem(.error, .heartbeatChannel, "heartbeat on channel \(frame.channel); heartbeats must use channel 0",
                                        reference: "AMQP 0-9-1 §4.2.7", range: 1..<3))
            }
            if size != 0 {
                problems.append(Problem(.error, .heartbeatPayload, "heartbeat carries \(size) payload bytes; it must carry none",
                                        reference: "AMQP 0-9-1 §4.2.7", range: 3..<7))
            }
        default:
            summary = "frame type \(frame.type)"
            problems.append(Problem(.error, .unknownFrameType, "frame type \(frame.type) is not defined by AMQP 0-9-1",
                                    reference: "AMQP 0-9-1 §4.2.3", range: 0..<1))
            if !frame.payload.isEmpty {
                fields.append(Field("payload", "Payload", Preview.value(of: frame.payload, length: size, limit: options.bodyPreviewBytes),
                                    range: 7..<(7 + frame.payload.count)))
            }
        }

        if let end = frame.frameEnd {
            fields.append(Field("frame_end", "Frame-End", .int(Int(end)),
                                line: AMQPTextLines.frameEnd(end),
                                range: (7 + size)..<(8 + size), textOnly: true))
            // AMQP 0-9-1 §4.2.3: frame-end must be 0xCE, else the frame is malformed.
            if end != AMQPSpec.frameEnd {
                problems.append(Problem(.error, .badFrameEnd,
                                        "frame-end is \(AMQPHex.string(UInt64(end), digits: 2)), not 0xCE: the frame's size or bytes are wrong; looking for the next frame boundary",
                                        reference: "AMQP 0-9-1 §4.2.3", range: (7 + size)..<(8 + size)))
                summary += " [bad frame-end]"
            }
        }
        if !frame.isWhole {
            summary += " [truncated]"
        }
        decoded.pdu = DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems,
                                   wireLength: frame.wireLength)
        return decoded
    }

    private func explain(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues,
                         requests: [AMQPMethodID: AMQPArgumentValues]) -> String? {
        guard spec.methodName == "close" || (spec.classID == 60 && spec.methodName == "return"),
              let code = values.int("reply-code") else { return nil }
        var failed: AMQPMethodID?
        if let classID = values.int("class-id"), let methodID = values.int("method-id"), classID != 0 {
            failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
        }
        let context = AMQPCloseExplanation.Context(replyCode: code, replyText: values.string("reply-text") ?? "",
                                                   failedMethod: failed, request: failed.flatMap { requests[$0] })
        return AMQPCloseExplanation.explain(context)
    }

    /// The name of a close's or a return's reply code (`NOT_FOUND`) as the frame's `reason`,
    /// where MQTT puts the name of a reason code: JSON only, the text tree's Reply-Code line
    /// names it. Nil for a method without a reply code, or a code the spec does not name.
    static func reasonField(_ values: AMQPArgumentValues) -> Field? {
        guard let code = values.int("reply-code"), let name = AMQPReplyCode(rawValue: UInt16(truncatingIfNeeded: code)).name else { return nil }
        return Field("reason", "Reason", .string(name), jsonOnly: true)
    }

    /// Root copies of what summaries group connections by: the client's product, version and
    /// platform from connection.start-ok's client-properties (a convention of the clients, not
    /// the spec, so any may be missing) and connection.open's virtual host. JSON only: the text
    /// tree already shows them inside the arguments.
    static func connectionSummaryFields(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues, depthLimit: Int) -> [Field] {
        guard spec.classID == 10 else { return [] }
        switch spec.methodID {
        case 11:
            guard case .table(let properties)? = values["client-properties"] else { return [] }
            var fields: [Field] = []
            for (name, key, label) in [("product", "client_product", "Client product"),
                                       ("version", "client_version", "Client version"),
                                       ("platform", "client_platform", "Client platform")] {
                // The text the entry's field shows.
                guard let entry = properties.entries.first(where: { $0.name == name }),
                      let value = entry.value.field(key: name, name: name, range: entry.range, depthLimit: depthLimit).value.stringValue
                else { continue }
                fields.append(Field(key, label, .string(value), jsonOnly: true))
            }
            return fields
        case 40:
            guard let vhost = values.string("virtual-host") else { return [] }
            return [Field("vhost", "Virtual host", .string(vhost), jsonOnly: true)]
        default:
            return []
        }
    }

    /// A content header's summary line: `content header basic body-size=N` and its property summary.
    /// Without `detailed`, the class alone (a table does not print summaries).
    static func headerSummary(_ result: AMQPContentHeaderDecoder.Result, detailed: Bool) -> String {
        var line = ByteSink(capacity: 48 + result.propertySummary.utf8.count)
        writeHeaderSummary(result, detailed: detailed, into: &line)
        return line.take()
    }

    /// `headerSummary(result)`, appended to `line` (no String made).
    static func writeHeaderSummary(_ result: AMQPContentHeaderDecoder.Result, detailed: Bool, into line: inout ByteSink) {
        line.literal("content header ")
        if let classID = result.classID {
            if let cls = AMQPSpec.class(id: classID) { line.append(cls.name) } else { line.append(AMQPFrameType.unknown(UInt64(classID), digits: 4)) }
        } else {
            line.literal("?")
        }
        guard detailed else { return }
        if let bodySize = result.bodySize {
            line.literal(" body-size=")
            if bodySize <= UInt64(Int.max) { line.append(Int(bodySize)) } else { line.append(String(bodySize)) }
        }
        if !result.propertySummary.isEmpty {
            line.literal(" ")
            line.append(result.propertySummary)
        }
    }

    /// A body frame's summary line: `body N bytes` and a short preview.
    /// Without `detailed`, no preview.
    static func bodySummary(_ frame: AMQPRawFrame, detailed: Bool) -> String {
        var line = ByteSink(capacity: 64)
        writeBodySummary(frame, detailed: detailed, into: &line)
        return line.take()
    }

    /// `bodySummary(frame)`, appended to `line` (no String made).
    static func writeBodySummary(_ frame: AMQPRawFrame, detailed: Bool, into line: inout ByteSink) {
        line.literal("body ")
        line.append(Int(frame.size))
        line.literal(" bytes")
        if detailed, let shown = summaryPreview(frame.payload) {
            line.literal(" ")
            line.append(shown)
        }
    }

    /// A short quoted text preview, or the first bytes in hex, for a summary line.
    static func summaryPreview(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty else { return nil }
        let head = bytes.prefix(40)
        let cut = head.count < bytes.count
        let text = head.withUnsafeBufferPointer { p -> String? in
            guard let (count, _) = Preview.textPrefix(p, allowCutTail: cut) else { return nil }
            // Quoted, in one buffer. Line breaks and tabs become spaces, byte by byte (all three
            // are ASCII, so UTF-8 stays valid), so the summary stays on one line; a CR LF pair
            // becomes two spaces.
            return String(unsafeUninitializedCapacity: count + (cut ? 5 : 2)) { out in
                out[0] = UInt8(ascii: "\"")
                for i in 0..<count {
                    let b = p[i]
                    out[i + 1] = b == 0x0A || b == 0x0D || b == 0x09 ? 0x20 : b
                }
                var n = count + 1
                if cut {
                    for _ in 0..<3 { out[n] = UInt8(ascii: "."); n += 1 }
                }
                out[n] = UInt8(ascii: "\"")
                return n + 1
            }
        }
        if let text { return text }
        let hexHead = bytes.prefix(16)
        return Preview.hex(hexHead) + (hexHead.count < bytes.count ? "..." : "")
    }
}
