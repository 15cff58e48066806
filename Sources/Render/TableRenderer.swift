import Dissection

/// Summary tables printed at the end: per connection, per topic (MQTT) or exchange and routing
/// key (AMQP), and the problems by kind. Fits an 80-column terminal.
///
/// It reads only the common model: the well-known field keys that decoders put at the root of a
/// PDU (`type` or `method`, `client_id`, `version`, `topic`, `payload_length`, `qos`, `retain`).
public struct TableRenderer: Renderer {
    public let options: RenderOptions

    private struct ConnectionRow {
        var stream: Int
        var client = ""
        var server = ""
        var protocolName = ""
        var clientID = ""
        var version = ""
        var first: Timestamp?
        var last: Timestamp?
        var pdus = 0
        var kinds: [(String, Int)] = []
        var bytesToServer = 0
        var bytesToClient = 0
    }

    private struct TopicRow {
        var name: String
        var messages = 0
        var bytes = 0
        var qos = [0, 0, 0]
        var retained = 0
    }

    private var connections: [Int: ConnectionRow] = [:]
    private var topics: [String: TopicRow] = [:]
    private var topicOrder: [String] = []
    private var problems: [String: (count: Int, example: String)] = [:]

    public init(options: RenderOptions) {
        self.options = options
    }

    public mutating func render(_ event: OutputEvent, into out: inout String) {
        switch event {
        case .pdu(let ctx, let direction, let pdu):
            var row = connections[ctx.stream] ?? ConnectionRow(stream: ctx.stream)
            row.protocolName = pdu.protocolName
            if row.client.isEmpty {
                row.client = direction == .toServer ? ctx.source : ctx.destination
                row.server = direction == .toServer ? ctx.destination : ctx.source
            }
            if row.first == nil { row.first = ctx.time }
            row.last = ctx.time
            row.pdus += 1
            let kind = pdu.field("method")?.value.stringValue ?? pdu.field("type")?.value.stringValue
                ?? pdu.field("frame_type")?.value.stringValue ?? "?"
            if let i = row.kinds.firstIndex(where: { $0.0 == kind }) { row.kinds[i].1 += 1 } else { row.kinds.append((kind, 1)) }
            if kind == "CONNECT" || kind == "connection.start-ok" {
                if let id = pdu.field("client_id")?.value.stringValue { row.clientID = id }
                if let v = pdu.field("version")?.value.stringValue { row.version = v }
            }
            connections[ctx.stream] = row
            if kind == "PUBLISH" || kind == "basic.publish" {
                let name = pdu.field("topic")?.value.stringValue
                    ?? pdu.field("routing_key").map { "\(pdu.field("exchange")?.value.stringValue ?? "") → \($0.value.stringValue ?? "")" } ?? "?"
                var t = topics[name] ?? TopicRow(name: name)
                if topics[name] == nil { topicOrder.append(name) }
                t.messages += 1
                t.bytes += pdu.field("payload_length")?.value.intValue ?? 0
                if let q = pdu.field("qos")?.value.intValue, (0...2).contains(q) { t.qos[q] += 1 }
                if case .bool(true)? = pdu.field("retain")?.value { t.retained += 1 }
                topics[name] = t
            }
            for p in pdu.problems { noteProblem(p) }
        case .streamNote(_, let p), .captureNote(let p):
            noteProblem(p)
        case .connectionClosed(let c):
            var row = connections[c.stream] ?? ConnectionRow(stream: c.stream)
            row.client = c.client
            row.server = c.server
            if row.protocolName.isEmpty { row.protocolName = c.protocolName }
            row.bytesToServer = c.bytesToServer
            row.bytesToClient = c.bytesToClient
            if row.first == nil || c.firstSeen < row.first! { row.first = c.firstSeen }
            if row.last == nil || row.last! < c.lastSeen { row.last = c.lastSeen }
            connections[c.stream] = row
        }
    }

    private mutating func noteProblem(_ p: Problem) {
        let key = p.code
        if let e = problems[key] { problems[key] = (e.count + 1, e.example) } else { problems[key] = (1, p.description) }
    }

    public mutating func finish(into out: inout String) {
        out.append("Connections\n")
        out.append(pad("stream", 6, right: true) + " " + pad("client", 21) + " " + pad("client id", 13) + " "
                   + pad("ver", 5) + " " + pad("secs", 6, right: true) + " " + pad("PDUs", 6, right: true) + " "
                   + pad("→ server", 8, right: true) + " " + pad("← server", 8, right: true) + "\n")
        for row in connections.values.sorted(by: { $0.stream < $1.stream }) {
            var secs = 0.0
            if let f = row.first, let l = row.last { secs = l.timeInterval - f.timeInterval }
            out.append(pad(String(row.stream), 6, right: true) + " " + pad(row.client, 21) + " "
                       + pad(row.clientID.isEmpty ? "-" : row.clientID, 13) + " " + pad(row.version.isEmpty ? row.protocolName : row.version, 5) + " "
                       + pad(fixed(secs), 6, right: true) + " " + pad(String(row.pdus), 6, right: true) + " "
                       + pad(size(row.bytesToServer), 8, right: true) + " " + pad(size(row.bytesToClient), 8, right: true) + "\n")
            let kinds = row.kinds.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            if !kinds.isEmpty { out.append(wrap(kinds, indent: 7, width: 80)) }
        }
        if !topicOrder.isEmpty {
            out.append("\nTopics\n")
            out.append(pad("topic", 40) + " " + pad("msgs", 6, right: true) + " " + pad("bytes", 8, right: true) + " "
                       + pad("QoS 0/1/2", 12, right: true) + " " + pad("retained", 8, right: true) + "\n")
            for name in topicOrder.sorted() {
                guard let t = topics[name] else { continue }
                out.append(pad(t.name, 40) + " " + pad(String(t.messages), 6, right: true) + " " + pad(size(t.bytes), 8, right: true) + " "
                           + pad("\(t.qos[0])/\(t.qos[1])/\(t.qos[2])", 12, right: true) + " " + pad(String(t.retained), 8, right: true) + "\n")
            }
        }
        if !problems.isEmpty {
            out.append("\nProblems\n")
            for (code, e) in problems.sorted(by: { $0.value.count > $1.value.count || ($0.value.count == $1.value.count && $0.key < $1.key) }) {
                out.append(pad(String(e.count), 6, right: true) + " " + pad(code, 22) + " ")
                out.append(String(e.example.prefix(50)) + "\n")
            }
        }
    }
}

/// Pads or cuts `s` to exactly `width` columns (cut strings end in …).
func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let n = s.count
    if n > width { return String(s.prefix(width - 1)) + "…" }
    let fill = String(repeating: " ", count: width - n)
    return right ? fill + s : s + fill
}

/// One decimal place.
func fixed(_ v: Double) -> String {
    let tenths = Int((v * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}

/// A byte count in B, kB, MB, GB (powers of 1000, like tshark's statistics).
func size(_ n: Int) -> String {
    if n < 10_000 { return "\(n) B" }
    if n < 10_000_000 { return "\(fixed(Double(n) / 1e3)) kB" }
    if n < 10_000_000_000 { return "\(fixed(Double(n) / 1e6)) MB" }
    return "\(fixed(Double(n) / 1e9)) GB"
}

/// Word-wraps at ", " boundaries.
func wrap(_ s: String, indent: Int, width: Int) -> String {
    var out = "", line = String(repeating: " ", count: indent)
    let parts = s.split(separator: ",").map { $0.hasPrefix(" ") ? String($0.dropFirst()) : String($0) }
    for (i, p) in parts.enumerated() {
        let piece = i < parts.count - 1 ? p + "," : p
        if line.count + piece.count + 1 > width && line.count > indent {
            out += line + "\n"
            line = String(repeating: " ", count: indent)
        }
        line += (line.count > indent ? " " : "") + piece
    }
    return out + line + "\n"
}
