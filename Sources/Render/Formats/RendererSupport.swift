import Dissection

// What the text and JSON renderers share: how a renderer's staging sink meets the caller's
// output, and the context bytes reused from PDU to PDU.

extension ByteSink {
    /// Lets `write` append to `bytes` through `sink`, emptied first and kept from call to call:
    /// one copy of the output per call.
    static func borrowing(_ bytes: inout [UInt8], reusing sink: ByteSink, _ write: (inout ByteSink) -> Void) {
        var sink = sink
        sink.removeAll()
        write(&sink)
        bytes.append(contentsOf: sink.bytes)
    }

    /// The text that `write` makes, for renderers asked for a String.
    static func text(_ write: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        write(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The bytes a renderer wrote for the last PDU's context, and the context they were written for.
/// The PDUs one segment completes share their frame, time, stream and direction, so they share
/// these bytes.
struct ContextCache {
    private var key: StreamContext?
    private var bytes: [UInt8] = []

    /// Writes the bytes kept, if they were written for `ctx`; false otherwise.
    func write(_ ctx: StreamContext, into out: inout ByteSink) -> Bool {
        // Through optional chaining: `guard let key` copied the kept context (its endpoints
        // retained and released) for every PDU.
        guard key?.frame == ctx.frame, key?.stream == ctx.stream, key?.time == ctx.time,
              key?.endpoints.same(as: ctx.endpoints) == true else { return false }
        bytes.withUnsafeBufferPointer { out.append(bytes: $0) }
        return true
    }

    /// Keeps `written`, the bytes just written for `ctx`.
    mutating func keep(_ ctx: StreamContext, _ written: Slice<UnsafeBufferPointer<UInt8>>) {
        key = ctx
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: written)
    }
}

/// What the analyses found over a run, by protocol: message flows and records by kind. Fixed
/// memory (kinds are few); summed over workers with `add`.
struct AnalysisSummary {
    struct PerProtocol {
        var flows = FlowStatistics()
        var connections = 0
        var kinds: [AnalysisKind: Int] = [:]
    }
    var protocols: [String: PerProtocol] = [:]

    mutating func add(_ c: ConnectionSummary) {
        guard let flows = c.flows else { return }
        protocols[c.protocolName, default: PerProtocol()].flows.add(flows)
        protocols[c.protocolName, default: PerProtocol()].connections += 1
    }

    mutating func add(_ r: AnalysisRecord) {
        protocols[r.protocolName, default: PerProtocol()].kinds[r.kind, default: 0] += 1
    }

    mutating func add(_ other: AnalysisSummary) {
        for (name, theirs) in other.protocols {
            var mine = protocols[name, default: PerProtocol()]
            mine.flows.add(theirs.flows)
            mine.connections += theirs.connections
            for (kind, n) in theirs.kinds { mine.kinds[kind, default: 0] += n }
            protocols[name] = mine
        }
    }

    /// The text section: nothing when no analysis ran.
    func text() -> String {
        var out = ""
        for name in protocols.keys.sorted() {
            let p = protocols[name]!
            // Nothing to say of a capture without QoS 1 or 2 traffic.
            guard p.flows.completed + p.flows.incomplete > 0 || !p.kinds.isEmpty else { continue }
            // Message flows are MQTT's (a connection's `ConnectionAnalysis.flows`); AMQP's
            // findings are records alone.
            if p.connections > 0 {
                out += "\n\(name.uppercased()) analysis (\(p.connections) connection\(p.connections == 1 ? "" : "s"))\n"
                let f = p.flows
                // MQTT's flows are QoS 1 and 2 PUBLISHes to their last step; AMQP's, publishes in
                // confirm mode to the broker's confirm.
                let amqp = name == "amqp"
                out += amqp ? "  publisher confirms: \(f.completed) confirmed, \(f.incomplete) not"
                            : "  message flows (QoS 1 and 2): \(f.completed) completed, \(f.incomplete) not"
                if let p50 = f.latency.percentile(50), let p99 = f.latency.percentile(99) {
                    out += (amqp ? "; time to confirm" : "; time to complete") + " p50 \(latencyText(microseconds: p50)), p99 \(latencyText(microseconds: p99)), max \(latencyText(microseconds: f.latency.maximum))"
                }
                out += "\n"
            } else {
                out += "\n\(name.uppercased()) analysis\n"
            }
            for kind in AnalysisKind.known + p.kinds.keys.filter({ !AnalysisKind.known.contains($0) }).sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let n = p.kinds[kind] else { continue }
                out += "  \(kind.words): \(n)\n"
            }
        }
        return out
    }
}
