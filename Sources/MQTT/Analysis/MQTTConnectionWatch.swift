import Dissection

/// What the connection analysis says of one PDU beyond its message flow: a PINGRESP's round
/// trip, a CONNACK's session. A typed value; its words and its JSON are a view of it
/// (`MQTTFlowNote+View.swift`).
public enum MQTTWatchNote: Sendable, Equatable {
    /// A PINGRESP: the PINGREQ it answers, and the time since it (microseconds).
    case pingAnswered(requestFrame: Int, latency: Int)
    /// A CONNACK to a CONNECT without Clean Session (Clean Start in 5.0): whether the broker
    /// had a session for the client.
    case session(present: Bool)
}

/// Follows one MQTT connection as a whole (MQTT 3.1.1 §3.1.2.10, §3.2.2.2, §3.12–3.14; 5.0 the
/// same): the keep-alive as negotiated (the CONNECT's, or a 5.0 CONNACK's Server Keep Alive),
/// the client's silences longer than 1.5 times it, PINGREQ → PINGRESP round trips, Session
/// Present against Clean Session, and how the connection ended: a DISCONNECT (with its reason),
/// the client closing without one (its will is published), or the broker closing it, with the
/// likely cause the capture shows (keep-alive expiry, a protocol violation just before, a
/// refused CONNECT).
///
/// Memory: a few values, and the PINGREQs not yet answered (a client sends one at a time).
public struct MQTTConnectionWatch: Sendable {
    /// Seconds; 0 turns the mechanism off; nil before the CONNECT.
    public private(set) var keepAlive: Int?
    private var keepAliveFromServer = false
    private var cleanSession: Bool?
    private var connackRefused: String?
    private var connackFrame = 0
    /// The connection's last PDU, either way.
    private var lastFrame: Int?
    private var clientDisconnect: (frame: Int, reason: String)?
    private var serverDisconnect: (frame: Int, reason: String)?
    /// The client's last packet.
    private var lastClient: (frame: Int, time: Int64)?
    /// The last packet with an error-level problem, and from whom.
    private var lastViolation: (frame: Int, fromClient: Bool)?
    private var pings: [(frame: Int, time: Int64)] = []
    /// The direction whose end (FIN) came first, and its frame.
    private var firstEnded: (direction: Direction, frame: Int)?
    private var version: MQTTVersion = .v3_1_1
    public internal(set) var records: [AnalysisRecord] = []

    public init() {}

    private var reference: String { version == .v5 ? "MQTT 5.0 §3.1.2.10" : "MQTT 3.1.1 §3.1.2.10" }

    public mutating func observe(_ packet: MQTTPacket, from direction: Direction, frame: Int, time: Timestamp) -> MQTTWatchNote? {
        version = packet.version
        let now = time.nanosecondsSince1970
        if packet.hasErrors { lastViolation = (frame, direction == .toServer) }
        lastFrame = frame
        var note: MQTTWatchNote?
        if direction == .toServer {
            checkSilence(until: now, frame: frame, why: nil)
            lastClient = (frame, now)
        }
        switch packet.type {
        case .connect where direction == .toServer:
            if case .connect(let connect) = packet.content {
                if let k = connect.keepAlive?.value { keepAlive = Int(k) }
                cleanSession = connect.cleanStart
            }
        case .connack where direction == .toClient:
            guard case .connack(let connack) = packet.content else { break }
            if let k = connack.properties?[.serverKeepAlive]?.intValue {
                keepAlive = k
                keepAliveFromServer = true
            }
            let code = connack.code?.value ?? 0
            connackFrame = frame
            if code != 0 {
                connackRefused = version == .v5 ? "0x\(hexByte(code)) \(MQTTReasonCode(rawValue: code).name(in: .connack))"
                    : MQTTConnectReturnCode(rawValue: code).description
            } else if let clean = cleanSession {
                let present = connack.sessionPresent(in: version)
                if clean && present {
                    records.append(AnalysisRecord(
                        protocolName: "mqtt", kind: .sessionPresentMismatch, frames: [frame],
                        message: "CONNACK #\(frame) says Session Present to a CONNECT with \(version == .v5 ? "Clean Start" : "Clean Session") set: the broker must start a new session",
                        reference: version == .v5 ? "MQTT 5.0 §3.2.2.1.1" : "MQTT 3.1.1 §3.2.2.2"))
                } else if !clean {
                    note = .session(present: present)
                }
            }
        case .pingreq where direction == .toServer:
            pings.append((frame, now))
        case .pingresp where direction == .toClient:
            if !pings.isEmpty {
                let request = pings.removeFirst()
                note = .pingAnswered(requestFrame: request.frame, latency: max(0, Int((now - request.time) / 1000)))
            }
        case .disconnect:
            var reason = ""
            if case .disconnect(let d) = packet.content, let code = d.reasonCode?.code, version == .v5 {
                reason = "0x\(hexByte(code.rawValue)) \(code.name(in: .disconnect))"
            }
            if direction == .toServer { clientDisconnect = (frame, reason) } else { serverDisconnect = (frame, reason) }
        default:
            break
        }
        return note
    }

    /// A direction ended at `frame` (its FIN, or the end of the connection).
    public mutating func ended(_ direction: Direction, frame: Int) {
        if firstEnded == nil { firstEnded = (direction, frame) }
    }

    /// A silence of the client's longer than 1.5 times the keep-alive, up to `now`: until its
    /// packet at `frame`, or (nil) until the connection ended.
    private mutating func checkSilence(until now: Int64, frame: Int?, why: String?) {
        guard let k = keepAlive, k > 0, let last = lastClient else { return }
        let silence = now - last.time
        let limit = Int64(k) * 1_500_000_000
        guard silence > limit else { return }
        let seconds = Double(silence / 1_000_000) / 1000
        records.append(AnalysisRecord(
            protocolName: "mqtt", kind: .keepAliveExceeded, frames: [last.frame] + (frame.map { [$0] } ?? []),
            message: "The client sent nothing for \(seconds) s after #\(last.frame), more than 1.5 times its keep-alive of \(k) s\(keepAliveFromServer ? " (the broker's Server Keep Alive)" : "")"
                + (why.map { ": \($0)" } ?? ""),
            reference: reference,
            fields: [Field("keep_alive", "Keep Alive (s)", .int(k)), Field("silence_ms", "Silence (ms)", .int(Int(silence / 1_000_000)))]))
    }

    /// The connection ended (`reason`, the reassembler's, at `frame`, `time`): how, in words, with
    /// a record when it did not end with the client's DISCONNECT.
    /// `client DISCONNECT #12 (reason)`: written once (most connections end so; interpolated, the
    /// words cost about 1,800 instructions a connection: callgrind, fleet capture).
    private static func disconnect(_ head: StaticString, _ frame: Int, _ reason: String) -> String {
        var words = ByteSink(capacity: 48)
        words.literal(head)
        words.append(frame)
        if !reason.isEmpty {
            words.literal(" (")
            words.append(reason)
            words.literal(")")
        }
        return words.take()
    }

    public mutating func end(_ reason: String, frame: Int, time: Timestamp, record: (AnalysisRecord) -> Void) -> String {
        for r in records { record(r) }
        records.removeAll()
        let now = time.nanosecondsSince1970
        if let d = clientDisconnect { return Self.disconnect("client DISCONNECT #", d.frame, d.reason) }
        if let d = serverDisconnect { return Self.disconnect("broker DISCONNECT #", d.frame, d.reason) }
        if reason == "end of capture" || reason == "idle timeout" || reason == "connection limit reached" {
            return reason
        }
        let how = reason == "reset (RST)" ? "reset" : "closed"
        // A FIN before the connection's last frame came first; ends made by the close itself
        // (a reset) say nothing of who closed.
        let first = firstEnded.flatMap { $0.frame < frame ? $0.direction : nil }
        let brokerFirst = first == .toClient
        var expired = false
        if let k = keepAlive, k > 0, let last = lastClient { expired = now - last.time > Int64(k) * 1_500_000_000 }
        if brokerFirst || connackRefused != nil || (first == nil && expired) {
            var cause: String
            var frames: [Int] = []
            if let refused = connackRefused {
                cause = "the CONNECT was refused (\(refused))"
                frames = [connackFrame]
            } else if expired {
                cause = "keep-alive expired"
                frames = lastClient.map { [$0.frame] } ?? []
                checkSilence(until: now, frame: nil, why: "the broker closed the connection")
                for r in records { record(r) }
                records.removeAll()
            } else if let v = lastViolation, v.fromClient {
                cause = "a protocol violation in #\(v.frame)"
                frames = [v.frame]
            } else {
                cause = "no cause in the capture"
                frames = lastFrame.map { [$0] } ?? []
            }
            record(AnalysisRecord(
                protocolName: "mqtt", kind: .closedByBroker, frames: frames,
                message: "The broker \(how) the connection without a DISCONNECT: \(cause)",
                reference: version == .v5 ? "MQTT 5.0 §4.13" : "MQTT 3.1.1 §4.8",
                fields: [Field("cause", "Likely Cause", .string(cause))]))
            return "broker \(how) it: \(cause)"
        }
        let what = first == .toServer ? "The client \(how) the connection" : "The connection was \(how == "reset" ? "reset (RST)" : "closed")"
        record(AnalysisRecord(
            protocolName: "mqtt", kind: .noDisconnect, frames: lastFrame.map { [$0] } ?? [],
            message: "\(what) without a DISCONNECT: the broker publishes the client's will, if it has one",
            reference: version == .v5 ? "MQTT 5.0 §3.1.2.5" : "MQTT 3.1.1 §3.1.2.5"))
        return first == .toServer ? "client \(how) it without DISCONNECT" : "\(reason) without DISCONNECT"
    }
}
