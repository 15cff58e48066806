import Dissection

/// MQTT clients across connections (a `SpanningAnalysis`): each client id's connections, the
/// intervals between a connection's end and the client's next CONNECT (its reconnect backoff),
/// and session takeovers (a CONNECT with the client id of a connection still open: the broker
/// closes the older one, MQTT 3.1.1 §3.1.4, 5.0 §3.1.4). It reads the CONNECTs and the
/// connections' ends of every connection, in capture order, on the caller's thread; its records
/// come out after the PDUs (`finish`).
///
/// Memory: per client id seen, a few values and its intervals (up to `maxIntervals`), for up to
/// `maxClients` client ids; later ones are counted, not followed.
// Unchecked: `observe` and `finish` run on the caller's thread alone (SpanningAnalysis); `reads`,
// asked on the workers, reads nothing of it. Its clients are its own, never handed out.
public final class MQTTClients: SpanningAnalysis, @unchecked Sendable {
    public static let maxClients = 65_536
    static let maxIntervals = 64

    /// A class: updated where the dictionary holds it (a struct copied out and back copied its
    /// arrays on every append).
    final class Client {
        var connections = 0
        /// The frames of the CONNECTs, up to `maxIntervals + 1`.
        var connectFrames: [Int] = []
        /// Milliseconds from a connection's end to the next CONNECT, up to `maxIntervals`.
        var intervals: [Int] = []
        /// The connection open now, if any: its stream and CONNECT frame.
        var open: (stream: Int, frame: Int)?
        /// When the client's last connection ended, nanoseconds since 1970.
        var lastEnd: Int64?
        /// Connections of the client in this order, with the streams' numbers.
        var streams: [Int] = []
        var takeovers: [Takeover] = []
    }

    /// A CONNECT while the client's older connection was open, and how the older one ended.
    struct Takeover {
        var old: Int
        var new: Int
        var oldStream: Int
        var newStream: Int
        var time: Int64
        /// The older connection's end, in its analysis's words (`broker DISCONNECT #9 (Session
        /// taken over)`), once the capture shows it.
        var oldEnding: String?
    }

    private var clients: [String: Client] = [:]
    /// Client ids in the order first seen (the records' order).
    private var order: [String] = []
    /// The client of each open connection, by stream.
    private var clientOf = IntTable<(id: String, client: Client)>()
    /// CONNECTs of client ids past `maxClients`, not followed.
    public private(set) var untracked = 0

    public init() {}

    public func reads(_ event: OutputEvent) -> Bool {
        switch event {
        case .pdu(let e):
            // A CONNECT: its summary starts with the word (`CONNECT v3.1.1 client=…`; `CONNECT`
            // alone for a table's box of facts).
            guard e.pdu.isProtocol("mqtt"), e.direction == .toServer else { return false }
            return e.pdu.withSummaryBytes { s in
                s.count >= 7 && s[0] == 0x43 && s[1] == 0x4F && s[2] == 0x4E && s[3] == 0x4E && s[4] == 0x45 && s[5] == 0x43
                    && s[6] == 0x54 && (s.count == 7 || s[7] == 0x20)
            }
        case .connectionClosed(let c):
            return c.protocolName == "mqtt"
        default:
            return false
        }
    }

    public func observe(_ event: OutputEvent) {
        switch event {
        case .pdu(let e):
            guard let id = e.pdu.summaryFacts.clientID, !id.isEmpty else { return }
            let now = e.context.time.nanosecondsSince1970
            connected(id, stream: e.context.stream, frame: e.context.frame, at: now)
        case .connectionClosed(let c):
            guard let (_, client) = clientOf.removeValue(forKey: c.stream) else { return }
            let end = c.lastSeen.nanosecondsSince1970
            if client.open?.stream == c.stream { client.open = nil }
            // The older connection of a takeover: how the broker ended it.
            if let t = client.takeovers.lastIndex(where: { $0.oldStream == c.stream && $0.oldEnding == nil }) {
                client.takeovers[t].oldEnding = c.ending ?? c.closeReason
            }
            client.lastEnd = max(client.lastEnd ?? end, end)
        default:
            break
        }
    }

    private func connected(_ id: String, stream: Int, frame: Int, at now: Int64) {
        let client: Client
        if let known = clients[id] {
            client = known
        } else {
            guard clients.count < Self.maxClients else {
                untracked += 1
                return
            }
            client = Client()
            clients[id] = client
            order.append(id)
        }
        client.connections += 1
        if client.connectFrames.count <= Self.maxIntervals { client.connectFrames.append(frame) }
        if client.streams.count <= Self.maxIntervals { client.streams.append(stream) }
        if let open = client.open, open.stream != stream {
            // The older connection has not ended: the broker takes the session over.
            if client.takeovers.count < Self.maxIntervals {
                client.takeovers.append(Takeover(old: open.frame, new: frame, oldStream: open.stream, newStream: stream, time: now))
            }
        } else if let end = client.lastEnd, client.intervals.count < Self.maxIntervals {
            client.intervals.append(max(0, Int((now - end) / 1_000_000)))
        }
        client.open = (stream, frame)
        clientOf[stream] = (id, client)
    }

    /// How the older connection of a takeover ended, in words: the broker ending it (the takeover
    /// its cause, whatever the connection's own analysis could tell), or otherwise.
    static func olderEnd(_ ending: String?) -> String {
        guard let ending else { return "the broker closes the older one (its end is not in the capture)" }
        if ending.hasPrefix("broker ") {
            let how = ending.hasSuffix(": no cause in the capture") ? String(ending.dropLast(": no cause in the capture".count)) : ending
            return "the broker ended the older one, the takeover its cause (\(how))"
        }
        return "the older one ended otherwise (\(ending))"
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        for id in order {
            guard let client = clients[id] else { continue }
            for t in client.takeovers {
                record(AnalysisRecord(
                    protocolName: "mqtt", kind: .sessionTakeover, frames: [t.old, t.new],
                    message: "Client \(id) connected on stream \(t.newStream) (CONNECT #\(t.new)) while its connection on stream \(t.oldStream) (CONNECT #\(t.old)) was open: "
                        + Self.olderEnd(t.oldEnding),
                    reference: "MQTT 3.1.1 §3.1.4, 5.0 §3.1.4",
                    fields: [Field("client_id", "Client ID", .string(id)),
                             Field("streams", "Streams", children: [Field("", "", .int(t.oldStream)), Field("", "", .int(t.newStream))], isList: true)]))
            }
            guard client.connections > 1, !client.intervals.isEmpty else { continue }
            let intervals = client.intervals
            var message = "Client \(id) connected \(client.connections) times; it reconnected after "
                + intervals.map { $0 == 0 ? "under 1 ms" : latencyText(microseconds: $0 * 1000) }.joined(separator: ", ")
            if let backoff = Self.backoff(intervals) { message += " (\(backoff))" }
            record(AnalysisRecord(
                protocolName: "mqtt", kind: .reconnect, frames: client.connectFrames,
                message: message,
                fields: [Field("client_id", "Client ID", .string(id)), Field("connections", "Connections", .int(client.connections)),
                         Field("intervals_ms", "Intervals (ms)", children: intervals.map { Field("", "", .int($0)) }, isList: true)]))
        }
    }

    /// The intervals' pattern in words: growing by about the same factor each time (an
    /// exponential backoff), or about the same each time.
    static func backoff(_ intervals: [Int]) -> String? {
        guard intervals.count >= 3, intervals.allSatisfy({ $0 > 0 }) else { return nil }
        let ratios = zip(intervals.dropFirst(), intervals).map { Double($0) / Double($1) }
        let mean = ratios.reduce(0, +) / Double(ratios.count)
        if mean >= 1.4, ratios.allSatisfy({ abs($0 - mean) <= 0.35 * mean }) {
            return "exponential backoff, ×\(Double(Int(mean * 10 + 0.5)) / 10) each time"
        }
        let average = Double(intervals.reduce(0, +)) / Double(intervals.count)
        if intervals.allSatisfy({ abs(Double($0) - average) <= 0.25 * average }) { return "about the same interval each time" }
        return nil
    }
}
