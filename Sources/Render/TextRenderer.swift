import Dissection

/// Per PDU a header line (frame, time, endpoints, stream, summary) and an annotated field tree.
public struct TextRenderer: Renderer {
    public let options: RenderOptions
    /// The staging buffer each event is written into, kept from event to event.
    private let scratch = ByteSink()
    /// The start of the last PDU's header line (frame to stream): a segment's PDUs share it.
    private var cachedContext = ContextCache()
    /// The last protocol name and its upper-case form (`MQTT`), made once per change of protocol.
    private var shownProtocol = (name: "", upper: "")

    public init(options: RenderOptions) {
        self.options = options
    }

    private func paint(_ s: String, _ code: String) -> String {
        options.color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
    }

    public mutating func render(_ event: OutputEvent, into out: inout String) {
        out.append(ByteSink.text { render(event, into: &$0) })
    }

    /// Writes straight into the caller's bytes: no String is made.
    public mutating func render(_ event: OutputEvent, into bytes: inout [UInt8]) {
        ByteSink.borrowing(&bytes, reusing: scratch) { write(event, into: &$0) }
    }

    private mutating func write(_ event: OutputEvent, into out: inout ByteSink) {
        switch event {
        case .pdu(let ctx, _, let pdu):
            if !cachedContext.write(ctx, into: &out) {
                let start = out.bytes.count
                if options.color {
                    out.append(paint("#\(ctx.frame)", "2"))
                } else {
                    out.literal("#")
                    out.append(ctx.frame)
                }
                // Appended piece by piece: an interpolated line would be built, then copied.
                out.literal(" ")
                out.append(ctx.time.timeOfDay)
                out.literal(" ")
                out.append(ctx.source)
                out.literal(" → ")
                out.append(ctx.destination)
                out.literal(" [stream ")
                out.append(ctx.stream)
                out.literal("] ")
                cachedContext.keep(ctx, out.bytes[start...])
            }
            if pdu.protocolName != shownProtocol.name {
                shownProtocol = (pdu.protocolName, pdu.protocolName.uppercased())
            }
            out.append(paint(shownProtocol.upper, "36"))
            out.literal(" ")
            out.append(paint(pdu.summary, "1"))
            if !pdu.problems.isEmpty { out.append(paint(" [\(pdu.problems.count) problem\(pdu.problems.count == 1 ? "" : "s")]", "31")) }
            out.literal("\n")
            if options.showTree {
                fields(pdu.fields, depth: 1, into: &out)
            }
            for p in pdu.problems {
                out.literal("    ")
                out.append(paint("! \(p.severity.rawValue): \(p.description)", p.severity == .error ? "31" : "33"))
                if let r = p.range { out.append(" (bytes \(r.lowerBound)..<\(r.upperBound))") }
                out.literal("\n")
            }
        case .streamNote(let ctx, let p):
            out.append(paint("#\(ctx.frame) \(ctx.time.timeOfDay) \(ctx.source) → \(ctx.destination) [stream \(ctx.stream)] ! \(p.description)", "33"))
            out.literal("\n")
        case .captureNote(let p):
            out.append(paint("! \(p.description)", "33"))
            out.literal("\n")
        case .connectionClosed:
            break
        }
    }

    public mutating func finish(into out: inout String) {}

    /// The fields of `fields` and their children, read through pointers: never copied (a copy
    /// retains each field's strings and arrays, then releases them).
    private func fields(_ fields: [Field], depth: Int, into out: inout ByteSink) {
        fields.withUnsafeBufferPointer { fields in
            guard let base = fields.baseAddress else { return }
            for i in fields.indices { field(base + i, depth: depth, into: &out) }
        }
    }

    private func field(_ f: UnsafePointer<Field>, depth: Int, into out: inout ByteSink) {
        if f.pointee.jsonOnly { return }
        out.append(spaces: 4 * depth)
        if let line = f.pointee.line {
            out.append(line)
        } else {
            out.append(f.pointee.label)
            appendValue(f.pointee.value, into: &out)
        }
        out.literal("\n")
        if !f.pointee.children.isEmpty { fields(f.pointee.children, depth: depth + 1, into: &out) }
    }

    /// `: value` for the text tree (nothing for no value), written into the sink in pieces.
    private func appendValue(_ v: FieldValue, into out: inout ByteSink) {
        switch v {
        case .none:
            return
        case .bool(let b):
            out.literal(b ? ": True" : ": False")
        case .int(let i):
            out.literal(": ")
            out.append(i)
        case .string(let s):
            out.literal(": ")
            out.append(s.isEmpty ? "\"\"" : s)
        case .text(let s, let length):
            out.literal(": ")
            JSON.escape(s, into: &out)
            if s.utf8.count < length { out.literal("…") }
            out.literal(" (")
            out.append(length)
            out.literal(length == 1 ? " byte)" : " bytes)")
        case .bytes(let preview, let length):
            let shown = preview.prefix(options.hexPreviewBytes)
            out.literal(": ")
            out.append(Preview.hex(shown))
            if shown.count < length { out.literal("…") }
            out.literal(" (")
            out.append(length)
            out.literal(length == 1 ? " byte, hex)" : " bytes, hex)")
        case .secret(let s):
            out.literal(": ")
            if options.showSecrets {
                out.append(s)
            } else {
                out.append(hiddenSecret)
                out.literal(" (use --show-secrets)")
            }
        }
    }
}
