import AMQP
import Dissection

/// Summary lines and root fields of frames, as the field tree shows them.
enum AMQPFrameSummary {
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
            for (name, key, label): (String, FieldKey, String) in [("product", "client_product", "Client product"),
                                                                   ("version", "client_version", "Client version"),
                                                                   ("platform", "client_platform", "Client platform")] {
                // The text the entry's field shows.
                guard let entry = properties.entries.first(where: { $0.name == name }),
                      let value = entry.value.field(key: FieldKey(dynamic: name), name: name, range: entry.range, depthLimit: depthLimit).value.stringValue
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

extension AMQPFrameSummary {
    /// Whether a frame's view reads `spec`'s arguments by name (`AMQPArgumentValues`): the summary
    /// of the connection class's start-ok and secure-ok, the closes and the return; the
    /// connection class's root fields and SASL user; a close's or a return's `reason`. The other
    /// methods' views read the typed arguments alone.
    static func readsValuesByName(_ spec: AMQPMethodSpec) -> Bool {
        spec.classID == 10 || (spec.classID, spec.methodID) == (20, 40) || (spec.classID, spec.methodID) == (60, 50)
    }

    /// The summary line: `basic.publish exchange=x routing-key=y mandatory`. `arguments`: the
    /// typed method's, in the spec's order; `values`, the same by name, read only for the
    /// connection class's start-ok and secure-ok, the closes and the return.
    static func summary(_ spec: AMQPMethodSpec, _ arguments: [AMQPArgument], values: AMQPArgumentValues) -> String {
        switch (spec.classID, spec.methodID) {
        case (10, 11), (10, 21):
            var parts = [spec.fullName]
            if let mechanism = values.string("mechanism") { parts.append("mechanism=\(AMQPText.summaryValue(mechanism))") }
            if let user = AMQPSASL.user(mechanism: values.string("mechanism"), response: values["response"]) {
                parts.append("user=\(AMQPText.summaryValue(user))")
            }
            return parts.joined(separator: " ")
        case (10, 50), (20, 40), (60, 50):
            var parts = [spec.fullName]
            if let code = values.int("reply-code") {
                let reply = AMQPReplyCode(rawValue: UInt16(truncatingIfNeeded: code))
                let text = values.string("reply-text") ?? ""
                if let name = reply.name, code != 200, !text.hasPrefix(name) {
                    parts.append("\(code) \(name)")
                } else {
                    parts.append(String(code))
                }
                if !text.isEmpty { parts.append(AMQPText.summaryValue(text, limit: 100).trimmingQuotes) }
            }
            if spec.methodName == "close", let classID = values.int("class-id"), classID != 0,
               let methodID = values.int("method-id") {
                let failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
                parts.append("(\(failed))")
            }
            guard spec.methodName == "return" else { return parts.joined(separator: " ") }
            var line = ByteSink(capacity: 128)
            line.append(parts.joined(separator: " "))
            appendSummaryParts(spec, arguments, skipping: ["reply-code", "reply-text"], to: &line)
            return line.take()
        default:
            // The frequent case (basic.publish, deliver, ack…): built as bytes from the typed
            // arguments, no parts array and no values by name (making them cost about 1,300
            // instructions a method: callgrind, bench JSON).
            var line = ByteSink(capacity: 96)
            line.append(spec.fullName)
            appendSummaryParts(spec, arguments, to: &line)
            return line.take()
        }
    }

    /// The arguments people read in a summary, each as ` name=value` (a set bit as ` name`),
    /// straight into `line`: not the zero ticket, empty strings, tables, secrets, or long strings
    /// that are empty, longer than 60 bytes or not text.
    private static func appendSummaryParts(_ spec: AMQPMethodSpec, _ arguments: [AMQPArgument], skipping: Set<String> = [],
                                           to line: inout ByteSink) {
        for i in arguments.indices where i < spec.arguments.count {
            let arg = spec.arguments[i]
            if !skipping.isEmpty, skipping.contains(arg.name) { continue }
            // ` name=`, before the value.
            func name(_ line: inout ByteSink) {
                line.literal(" ")
                line.append(arg.name)
                line.literal("=")
            }
            func number(_ v: Int, _ line: inout ByteSink) {
                // The ticket of access control is deprecated and always zero.
                if arg.name == "ticket" && v == 0 { return }
                name(&line)
                line.append(v)
            }
            switch arguments[i] {
            case .bit(let bit):
                if bit.value {
                    line.literal(" ")
                    line.append(arg.name)
                }
            case .octet(let v): number(Int(v.value), &line)
            case .short(let v): number(Int(v.value), &line)
            case .long(let v): number(Int(v.value), &line)
            case .longlong(let v): number(Int(clamping: v.value), &line)
            case .timestamp(let v): number(Int(clamping: v.value), &line)
            case .shortString(let s):
                if !s.value.isEmpty {
                    name(&line)
                    line.append(AMQPText.summaryValue(s.value))
                }
            case .longString(let s):
                let length = s.value.declaredLength
                if AMQPArgumentReader.secretArguments.contains(arg.name) || length == 0 || length > 60 { continue }
                if let text = Preview.utf8Text(s.value.bytes) {
                    name(&line)
                    line.append(AMQPText.summaryValue(text))
                }
            case .table:
                continue
            }
        }
    }
}

extension String {
    /// The string without the quotes `summaryValue` adds around spaced text.
    fileprivate var trimmingQuotes: String {
        guard count >= 2, hasPrefix("\""), hasSuffix("\"") else { return self }
        return String(dropFirst().dropLast())
    }
}
