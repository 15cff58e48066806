import Dissection

/// One JSON object per line per PDU (NDJSON). The schema is in docs/json-schema.md.
public struct JSONRenderer: SinkRenderer {
    public let options: RenderOptions
    /// The staging buffer each event is written into, kept from event to event.
    public let scratch = ByteSink()
    private var cachedSecond = Int64.min
    private var cachedDateTime = ""
    /// The context pairs of the last PDU (`"frame":…,"dst":"…"`): a segment's PDUs share them.
    private var cachedContext = ContextCache()

    public init(options: RenderOptions) {
        self.options = options
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
            out.literal("{")
            if !cachedContext.write(ctx, into: &out) {
                let start = out.bytes.count
                context(ctx, into: &out)
                cachedContext.keep(ctx, out.bytes[start...])
            }
            out.literal(",\"protocol\":")
            JSONString.escape(pdu.protocolName, into: &out)
            out.literal(",\"summary\":")
            pdu.withSummaryBytes { JSONString.escape(bytes: $0, into: &out) }
            out.literal(",\"length\":")
            out.append(pdu.wireLength)
            out.literal(",")
            JSONString.escape(pdu.protocolName, into: &out)
            out.literal(":")
            JSONTree.writeObject(pdu.fields, showSecrets: options.showSecrets, into: &out)
            out.literal(",\"problems\":[")
            for (i, p) in pdu.problems.enumerated() {
                if i > 0 { out.literal(",") }
                problem(p, into: &out)
            }
            out.literal("]}\n")
        case .streamNote(let ctx, let p):
            out.literal("{")
            context(ctx, into: &out)
            out.literal(",\"event\":")
            JSONString.escape(p.code.rawValue, into: &out)
            // An array of one, as a PDU's `problems`: one key and one shape for both kinds of line.
            out.literal(",\"problems\":[")
            problem(p, into: &out)
            out.literal("]}\n")
        case .captureNote(let p):
            out.literal("{\"event\":")
            JSONString.escape(p.code.rawValue, into: &out)
            out.literal(",\"problems\":[")
            problem(p, into: &out)
            out.literal("]}\n")
        case .connectionClosed(let c):
            out.literal("{\"event\":\"connection\",\"stream\":")
            out.append(c.stream)
            out.literal(",\"client\":")
            JSONString.escape(c.client, into: &out)
            out.literal(",\"server\":")
            JSONString.escape(c.server, into: &out)
            out.literal(",\"application\":")
            JSONString.escape(c.protocolName, into: &out)
            out.literal(",\"first_seen\":")
            out.appendQuotedISO8601(c.firstSeen)
            out.literal(",\"last_seen\":")
            out.appendQuotedISO8601(c.lastSeen)
            out.literal(",\"bytes_to_server\":")
            out.append(c.bytesToServer)
            out.literal(",\"bytes_to_client\":")
            out.append(c.bytesToClient)
            out.literal(",\"end\":")
            JSONString.escape(c.closeReason, into: &out)
            if let ending = c.ending {
                out.literal(",\"ending\":")
                JSONString.escape(ending, into: &out)
            }
            if let f = c.flows {
                out.literal(",\"flows\":{\"completed\":")
                out.append(f.completed)
                out.literal(",\"incomplete\":")
                out.append(f.incomplete)
                if let p50 = f.latency.percentile(50), let p99 = f.latency.percentile(99) {
                    out.literal(",\"latency_us\":{\"p50\":")
                    out.append(p50)
                    out.literal(",\"p99\":")
                    out.append(p99)
                    out.literal(",\"max\":")
                    out.append(f.latency.maximum)
                    out.literal("}")
                }
                out.literal("}")
            }
            out.literal("}\n")
        case .analysis(let r):
            out.literal("{")
            if let ctx = r.context {
                context(ctx, into: &out)
                out.literal(",")
            }
            out.literal("\"protocol\":")
            JSONString.escape(r.protocolName, into: &out)
            out.literal(",\"analysis\":")
            JSONString.escape(r.kind.rawValue, into: &out)
            out.literal(",\"frames\":[")
            for (i, f) in r.frames.enumerated() {
                if i > 0 { out.literal(",") }
                out.append(f)
            }
            out.literal("],\"message\":")
            JSONString.escape(r.message, into: &out)
            if let ref = r.reference {
                out.literal(",\"reference\":")
                JSONString.escape(ref, into: &out)
            }
            var first = false
            JSONTree.writeMembers(r.fields, first: &first, showSecrets: options.showSecrets, into: &out)
            out.literal("}\n")
        }
    }

    public mutating func finish(into out: inout String) {}

    /// Nothing to take in: what it writes of an event depends on that event alone.
    public mutating func merge(_ other: JSONRenderer) {}

    private mutating func context(_ c: StreamContext, into out: inout ByteSink) {
        out.literal("\"frame\":")
        out.append(c.frame)
        out.literal(",\"time\":\"")
        // The date and time to the second change rarely from one PDU to the next: made once per second.
        if c.time.seconds != cachedSecond {
            cachedSecond = c.time.seconds
            cachedDateTime = c.time.iso8601Seconds
        }
        out.append(cachedDateTime)
        out.appendFraction(c.time)
        // The same time as a number, for jq (whose `fromdate` rejects the ISO fraction) and the like.
        out.literal("Z\",\"ts\":")
        out.appendEpochSeconds(c.time)
        out.literal(",\"stream\":")
        out.append(c.stream)
        out.literal(",\"src\":")
        JSONString.escape(c.source, into: &out)
        out.literal(",\"dst\":")
        JSONString.escape(c.destination, into: &out)
    }

    private func problem(_ p: Problem, into out: inout ByteSink) {
        out.literal("{\"severity\":")
        JSONString.escape(p.severity.rawValue, into: &out)
        out.literal(",\"code\":")
        JSONString.escape(p.code.rawValue, into: &out)
        out.literal(",\"message\":")
        JSONString.escape(p.message, into: &out)
        if let r = p.reference {
            out.literal(",\"reference\":")
            JSONString.escape(r, into: &out)
        }
        if let range = p.range {
            out.append(",\"offset\":\(range.lowerBound),\"bytes\":\(range.count)")
        }
        out.literal("}")
    }
}
