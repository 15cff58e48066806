import Dissection

/// Reads one framed unit, without connection state: a frame into its typed values
/// (`AMQPDecodedFrame`), a protocol header or unframed bytes into their PDU. The connection
/// dissector adds what needs state (frame-max, message assembly, request context).
struct AMQPFrameDecoder {
    let options: AMQPOptions

    /// A unit's PDU: a frame's typed values (`decode(_:problems:)`) seen as their field tree,
    /// without connection state (the connection dissector adds it).
    func dissect(_ unit: AMQPFramedUnit, requests: [AMQPMethodID: AMQPArgumentValues] = [:]) -> DissectedPDU {
        switch unit {
        case .protocolHeader(let bytes, let problems):
            return decodeProtocolHeader(bytes, problems: problems)
        case .unframed(let count, let problems):
            // Text only: the count is the PDU's wire length, which JSON gives as the top-level
            // `length`; an `amqp.length` would repeat it under a name that means a body's length.
            let fields = [Field("frame_type", "Type", .string("unframed")),
                          Field("length", "Length", .int(count), textOnly: true)]
            let summary = problems.last?.message ?? "\(count) bytes not framed"
            return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems, wireLength: count)
        case .frame(let framed):
            let decoded = decode(framed.frame, problems: framed.problems)
            return decoded.dissected(options: options, requests: requests)
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

    /// A frame's typed values and the problems in its bytes (the framer's first): no field
    /// tree, no connection state. The field tree is a view of the result
    /// (`AMQPDecodedFrame+FieldTree.swift`), as is what a table counts.
    func decode(_ frame: AMQPRawFrame, problems framing: [Problem]) -> AMQPDecodedFrame {
        var decoded = AMQPDecodedFrame(frame: frame, problems: framing)
        let size = Int(frame.size)
        switch frame.type {
        case .method:
            let result = AMQPMethodDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
            decoded.problems += result.problems
            // AMQP 0-9-1 §4.2.3 / §2.3.5: channel 0 is the connection's; connection methods use no other.
            if let spec = result.spec, (spec.classID == 10) != (frame.channel == 0) {
                decoded.problems.append(Problem(.error, .wrongChannel,
                                                spec.classID == 10
                                                    ? "\(spec.fullName) must be sent on channel 0, not \(frame.channel)"
                                                    : "\(spec.fullName) cannot be sent on channel 0, which belongs to the connection",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
            decoded.method = result
        case .header:
            let result = AMQPContentHeaderDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
            decoded.problems += result.problems
            if frame.channel == 0 {
                decoded.problems.append(Problem(.error, .wrongChannel, "content header on channel 0, which carries no content",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
            decoded.header = result
        case .body:
            if frame.channel == 0 {
                decoded.problems.append(Problem(.error, .wrongChannel, "content body on channel 0, which carries no content",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
        case .heartbeat:
            // AMQP 0-9-1 §4.2.7: heartbeat frames have channel 0 and no payload.
            if frame.channel != 0 {
                decoded.problems.append(Problem(.error, .heartbeatChannel, "heartbeat on channel \(frame.channel); heartbeats must use channel 0",
                                                reference: "AMQP 0-9-1 §4.2.7", range: 1..<3))
            }
            if size != 0 {
                decoded.problems.append(Problem(.error, .heartbeatPayload, "heartbeat carries \(size) payload bytes; it must carry none",
                                                reference: "AMQP 0-9-1 §4.2.7", range: 3..<7))
            }
        default:
            decoded.problems.append(Problem(.error, .unknownFrameType, "frame type \(frame.type) is not defined by AMQP 0-9-1",
                                            reference: "AMQP 0-9-1 §4.2.3", range: 0..<1))
        }
        // AMQP 0-9-1 §4.2.3: frame-end must be 0xCE, else the frame is malformed.
        if let end = frame.frameEnd, end != AMQPSpec.frameEnd {
            decoded.problems.append(Problem(.error, .badFrameEnd,
                                            "frame-end is \(AMQPHex.string(UInt64(end), digits: 2)), not 0xCE: the frame's size or bytes are wrong; looking for the next frame boundary",
                                            reference: "AMQP 0-9-1 §4.2.3", range: (7 + size)..<(8 + size)))
        }
        return decoded
    }

    static func explain(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues,
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
        var line = ByteSink(capacity: 128)
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
        let propertySummary = result.propertySummary
        if !propertySummary.isEmpty {
            line.literal(" ")
            line.append(propertySummary)
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
