import Dissection

/// Per PDU a header line (frame, time, endpoints, stream, summary) and an annotated field tree.
public struct TextRenderer: SinkRenderer {
    public let options: RenderOptions
    /// The staging buffer each event is written into, kept from event to event.
    public let scratch = ByteSink()
    /// The start of the last PDU's header line (frame to stream): a segment's PDUs share it.
    private var cachedContext = ContextCache()
    /// The last protocol name and its upper-case form (`MQTT`) as written, with its colour and
    /// the space after it, made once per change of protocol.
    private var shownProtocol = (name: "", written: [UInt8]())

    /// How values read in the tree, from `options`.
    private let style: TextTree.Style
    /// What the analyses found, for the section at the end.
    private var analysis = AnalysisSummary()

    public init(options: RenderOptions) {
        self.options = options
        style = options.textTreeStyle
    }

    private func paint(_ s: String, _ code: String) -> String {
        options.color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
    }

    /// Writes straight into the caller's sink: no staging copy.
    public mutating func render(_ event: OutputEvent, into sink: inout ByteSink) {
        write(event, into: &sink)
    }

    private mutating func write(_ event: OutputEvent, into out: inout ByteSink) {
        switch event {
        case .counted(let run):
            // Only a pipeline asked for counted PDUs makes these (for tables): shown as PDUs.
            for event in run.pduEvents { write(.pdu(event), into: &out) }
        case .pdu(let event):
            let ctx = event.context, pdu = event.pdu
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
                out.appendTimeOfDay(ctx.time)
                out.literal(" ")
                out.append(ctx.source)
                out.literal(" → ")
                out.append(ctx.destination)
                out.literal(" [stream ")
                out.append(ctx.stream)
                out.literal("] ")
                cachedContext.keep(ctx, out.bytes[start...])
            }
            if !pdu.isProtocol(shownProtocol.name) {
                let name = pdu.protocolName
                shownProtocol = (name, Array((paint(name.uppercased(), "36") + " ").utf8))
            }
            shownProtocol.written.withUnsafeBufferPointer { out.append(bytes: $0) }
            if options.color { out.append(paint(pdu.summary, "1")) } else { pdu.withSummaryBytes { out.append(bytes: $0) } }
            // Without colour, piece by piece: no string is made for a bracket.
            for note in pdu.annotations {
                if options.color {
                    out.append(paint(" [\(note)]", "35"))
                } else {
                    out.literal(" [")
                    out.append(note)
                    out.literal("]")
                }
            }
            let problemCount = pdu.problemCount
            if problemCount > 0 {
                if options.color {
                    out.append(paint(" [\(problemCount) problem\(problemCount == 1 ? "" : "s")]", "31"))
                } else {
                    out.literal(" [")
                    out.append(problemCount)
                    out.literal(problemCount == 1 ? " problem]" : " problems]")
                }
            }
            out.literal("\n")
            if options.showTree {
                TextTree.write(pdu.fields, depth: 1, style: style, into: &out)
            }
            if problemCount > 0 {
                for p in pdu.problems {
                    out.literal("    ")
                    if options.color {
                        out.append(paint("! \(p.severity.rawValue): \(p.description)", p.severity == .error ? "31" : "33"))
                    } else {
                        out.literal("! ")
                        out.append(p.severity.rawValue)
                        out.literal(": ")
                        out.append(p.description)
                    }
                    if let r = p.range {
                        out.literal(" (bytes ")
                        out.append(r.lowerBound)
                        out.literal("..<")
                        out.append(r.upperBound)
                        out.literal(")")
                    }
                    out.literal("\n")
                }
            }
        case .streamNote(let ctx, let p):
            out.append(paint("#\(ctx.frame) \(ctx.time.timeOfDay) \(ctx.source) → \(ctx.destination) [stream \(ctx.stream)] ! \(p.description)", "33"))
            out.literal("\n")
        case .captureNote(let p):
            out.append(paint("! \(p.description)", "33"))
            out.literal("\n")
        case .connectionClosed(let c):
            analysis.add(c)
        case .analysis(let record):
            analysis.add(record)
            var line = ""
            if let ctx = record.context {
                line = "#\(ctx.frame) \(ctx.time.timeOfDay) \(ctx.source) → \(ctx.destination) [stream \(ctx.stream)] "
            }
            line += "\(record.protocolName.uppercased()) analysis: \(record.kind.words): \(record.message)"
            if record.kind == .topology, record.protocolName == "amqp" {
                line += ":\n" + AMQPTopologyTree.lines(record.fields, routes: true).joined(separator: "\n")
            }
            if let r = record.reference { line += " (\(r))" }
            out.append(paint(line, "35"))
            out.literal("\n")
        }
    }

    /// The analysis section, when an analysis ran: message flows and what was found.
    public mutating func finish(into out: inout String) {
        out += analysis.text()
    }

    /// The analysis section's sums: the rest of what it writes depends on each event alone.
    public mutating func merge(_ other: TextRenderer) {
        analysis.add(other.analysis)
    }
}
