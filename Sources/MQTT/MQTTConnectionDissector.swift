import Dissection

/// Decodes both directions of one MQTT connection: frames each direction, learns the
/// version from CONNECT, keeps each direction's topic aliases, and turns lost or skipped
/// bytes into problems on the next packet (or on a final "not decoded" entry at `finish`).
///
/// Version without a CONNECT: `MQTTOptions.assumedVersion` if set. Otherwise each packet is
/// decoded as 3.1.1 and as 5.0; the first packet that parses cleanly (no error-level
/// problem) in exactly one of the two fixes the connection's version. Until then packets are
/// shown as 3.1.1, the older and, in captures without a CONNECT, more common version. (A 5.0
/// PUBACK with a reason code, a CONNACK or SUBACK with properties parse cleanly only as 5.0;
/// most 3.1.1 PUBLISH payloads fail as 5.0 properties.)
///
/// Each `receive` is taken to end a segment (the pipeline hands over one TCP segment's new
/// bytes per call). While a direction resynchronises (a capture that starts mid-stream, bytes
/// lost in a gap), a packet that ends exactly at a segment end is accepted there and then, so
/// it comes out with the segment that completed it rather than with the next one to arrive.
public struct MQTTConnectionDissector: StreamDissector {
    public let info: ConnectionInfo
    public let options: MQTTOptions
    /// How its packets are shown (Render's `MQTTViews`, whose `init(info:options:)` hands over
    /// the standard view).
    public let view: any MQTTPacketView
    /// The version and per-direction state learned so far.
    public private(set) var session: MQTTSession

    private var toServerFramer: MQTTFramer
    private var toClientFramer: MQTTFramer
    private var pendingToServer = Pending()
    private var pendingToClient = Pending()
    private var guessNoted = false
    /// Summary lines are written here, packet after packet (one buffer, not one per line). A
    /// reference: a copy of the dissector makes its own before writing (in `decode`), and so
    /// does a new one (both start shared: a connection that decodes nothing allocates neither).
    private var lineSink = ByteSink.unallocated
    /// The QoS 1 and 2 message flows (with `options.analysis`).
    public private(set) var flows: MQTTFlows
    /// The connection as a whole: keep-alive, pings, session, how it ended (with `options.analysis`).
    public private(set) var watch = MQTTConnectionWatch()
    /// Where the bytes being decoded were captured (`locate`).
    private var frame = 0
    private var time = Timestamp(seconds: 0, nanoseconds: 0)
    /// The frame of the client's last PUBLISH, and that PUBLISH's place among the client's
    /// PUBLISHes in it (a run in two passes finds its deliveries by them: `MQTTFlowLinks`).
    private var lastPublish = (frame: -1, place: 0)

    /// Problems waiting for the next PDU of a direction.
    private struct Pending {
        var problems: [Problem] = []
        var skippedBytes = 0
    }

    public init(info: ConnectionInfo, options: MQTTOptions, view: any MQTTPacketView) {
        self.info = info
        self.options = options
        self.view = view
        self.session = MQTTSession(version: options.assumedVersion, source: .assumed)
        self.toServerFramer = MQTTFramer(options: options, startsMidStream: info.startedMidStream)
        self.toClientFramer = MQTTFramer(options: options, startsMidStream: info.startedMidStream)
        self.flows = MQTTFlows(startedMidStream: info.startedMidStream, maxInFlight: options.maxFlowsInFlight,
                               links: options.flowLinks, stream: info.stream)
    }

    public var analyses: Bool { options.analysis }

    public mutating func locate(frame: Int, time: Timestamp) {
        self.frame = frame
        self.time = time
    }

    public mutating func takeRecords(into records: inout [AnalysisRecord]) {
        flows.takeRecords(into: &records)
        if !watch.records.isEmpty {
            records += watch.records
            watch.records.removeAll()
        }
    }

    public mutating func end(_ reason: String, record: (AnalysisRecord) -> Void) -> ConnectionAnalysis? {
        guard options.analysis else { return nil }
        let statistics = flows.end(reason, record: record)
        let ending = watch.end(reason, frame: frame, time: time, record: record)
        return ConnectionAnalysis(flows: statistics, ending: ending)
    }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU]) {
        _ = receive(bytes, from: direction, into: &output, limit: .max)
    }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        append(bytes, from: direction)
        return drain(direction, into: &output, limit: limit)
    }

    /// A segment's bytes, to the direction's framer.
    private mutating func append(_ bytes: ArraySlice<UInt8>, from direction: Direction) {
        if direction == .toServer {
            toServerFramer.append(bytes, endsSegment: true)
        } else {
            toClientFramer.append(bytes, endsSegment: true)
        }
    }

    public mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        drain(direction, into: &output, limit: limit)
    }

    /// With `PDUDetail.facts`: the packets with no problem (`MQTTPacketView.counted`).
    public var makesCountedPDUs: Bool { options.detail == .facts }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        append(bytes, from: direction)
        if output.protocolName != "mqtt" { output.protocolName = "mqtt" }
        return drain(direction, into: &output, limit: limit)
    }

    public mutating func receiveMore(from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        if output.protocolName != "mqtt" { output.protocolName = "mqtt" }
        return drain(direction, into: &output, limit: limit)
    }

    public mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU]) {
        if direction == .toServer { toServerFramer.gap(count) } else { toClientFramer.gap(count) }
        drain(direction, into: &output)
    }

    public mutating func finish(_ direction: Direction, into output: inout [DissectedPDU]) {
        if options.analysis { watch.ended(direction, frame: frame) }
        if direction == .toServer { toServerFramer.finish() } else { toClientFramer.finish() }
        drain(direction, into: &output)
        let pending = direction == .toServer ? pendingToServer : pendingToClient
        if direction == .toServer { pendingToServer = Pending() } else { pendingToClient = Pending() }
        // Only bytes that were seen get an entry; a gap alone is the reassembler's to report.
        guard pending.skippedBytes > 0 else { return }
        output.append(view.skipped(pending.skippedBytes, problems: pending.problems))
    }

    private mutating func nextStep(_ direction: Direction) -> MQTTFramer.Step {
        direction == .toServer ? toServerFramer.next() : toClientFramer.next()
    }

    /// Frames and decodes what the direction's framer holds; with `limit`, stops after that many
    /// PDUs, returning true (the framer keeps the rest, taken by the next call).
    @discardableResult
    private mutating func drain<Output: PDUOutput>(_ direction: Direction, into output: inout Output, limit: Int = .max) -> Bool {
        let start = output.count
        // The usual PDU, whole in one segment, comes straight from the framer into `whole`.
        var whole = MQTTFrame(held: [], wireLength: 0)
        while true {
            if output.count - start >= limit { return true }
            if direction == .toServer ? toServerFramer.nextWholeFrame(into: &whole) : toClientFramer.nextWholeFrame(into: &whole) {
                take(whole, from: direction, into: &output)
                continue
            }
            switch nextStep(direction) {
            case .needMore:
                return false
            case .frame(let frame):
                take(frame, from: direction, into: &output)
            case .malformedHeader(let bytes):
                var state = session[direction]
                let packet = MQTTDecoder.decodeTyped(bytes[...], wireLength: bytes.count, version: session.version ?? .v3_1_1,
                                                     state: &state)
                var pdu = view.pdu(of: packet, notes: MQTTPacketNotes(), options: options, lineSink: nil)
                pdu.problems.append(Problem(.note, .resynchronising, "Decoding resumes at the next plausible packet boundary"))
                attachPending(direction, to: &pdu)
                output.append(pdu)
            case .skipped(let count, let reason):
                let problem: Problem
                var seen = count
                switch reason {
                case .resynchronising:
                    let why = info.startedMidStream ? "the capture starts inside the connection; " : ""
                    problem = Problem(.warning, .skippedBytes,
                                      "\(count) bytes skipped before this point to find a packet boundary (\(why)they do not start a plausible packet)")
                case .lostInGap:
                    seen = 0
                    problem = Problem(.warning, .gap,
                                      "\(count) bytes missing from the capture between packets; decoding resynchronises on the next plausible packet boundary")
                case .incompleteAtEnd:
                    problem = Problem(.warning, .incompleteAtEnd,
                                      "The stream ended with \(count) bytes that do not make a complete packet")
                }
                if direction == .toServer {
                    pendingToServer.problems.append(problem)
                    pendingToServer.skippedBytes += seen
                } else {
                    pendingToClient.problems.append(problem)
                    pendingToClient.skippedBytes += seen
                }
            }
        }
    }

    /// A framed PDU, decoded into `output`. With `PDUDetail.facts`, a packet in which the decoder
    /// found no problem, and that takes no problems waiting, is handed on as the values a table
    /// counts (`MQTTPacketView.counted`); every other as its field tree.
    @inline(__always)
    private mutating func take<Output: PDUOutput>(_ frame: MQTTFrame, from direction: Direction, into output: inout Output) {
        let packet = decode(frame, from: direction)
        let note = options.analysis ? flows.observe(packet, from: direction, frame: self.frame, time: time) : nil
        let watchNote = options.analysis ? watch.observe(packet, from: direction, frame: self.frame, time: time) : nil
        let delivery = deliveries(of: packet, from: direction)
        if case .facts = options.detail, !hasPending(direction) {
            if let counted = view.counted(packet) {
                let type = packet.type, view = view
                output.append(counted: counted, orBox: { view.box($0, type: type) })
                return
            }
            // A CONNECT's client id and version are counted too: a box of facts, still no tree.
            if let box = view.countedBox(packet) {
                output.append(box)
                return
            }
        }
        // Copies of a dissector may be used on different threads: one never writes into another's buffer.
        if !lineSink.isUniquelyReferenced { lineSink = ByteSink(capacity: 128) }
        var pdu = view.pdu(of: packet, notes: MQTTPacketNotes(flow: note, watch: watchNote, delivery: delivery),
                                   options: options, lineSink: lineSink)
        pdu.packet = consume packet
        attachPending(direction, to: &pdu)
        output.append(pdu)
    }

    /// In the second pass of a run in two: the deliveries the first matched to a client PUBLISH.
    private mutating func deliveries(of packet: MQTTPacket, from direction: Direction) -> MQTTFlowLinks.Delivery? {
        guard case .read(let links) = options.flowLinks, packet.type == .publish, direction == .toServer else { return nil }
        lastPublish = lastPublish.frame == frame ? (frame, lastPublish.place + 1) : (frame, 0)
        return links.delivery(stream: info.stream, frame: frame, place: lastPublish.place)
    }

    /// Whether problems wait for the direction's next PDU.
    private func hasPending(_ direction: Direction) -> Bool {
        direction == .toServer ? !pendingToServer.problems.isEmpty : !pendingToClient.problems.isEmpty
    }

    private mutating func attachPending(_ direction: Direction, to pdu: inout DissectedPDU) {
        // Checked in place: copying the pending value out retains its array, for every packet.
        if direction == .toServer {
            guard !pendingToServer.problems.isEmpty else { return }
            pdu.problems.insert(contentsOf: pendingToServer.problems, at: 0)
            pendingToServer = Pending()
        } else {
            guard !pendingToClient.problems.isEmpty else { return }
            pdu.problems.insert(contentsOf: pendingToClient.problems, at: 0)
            pendingToClient = Pending()
        }
    }

    /// A frame decoded with the connection's version, or with each candidate while it is not
    /// known; the session learns from it (version, topic aliases, Topic Alias Maximum).
    private mutating func decode(_ frame: MQTTFrame, from direction: Direction) -> MQTTPacket {
        let type = frame.held.first.map { MQTTPacketType(rawValue: $0 >> 4) }
        if type == .connect {
            var packet = decode(frame, version: session.version ?? .v3_1_1, from: direction)
            if session.sawConnect {
                // MQTT 3.1.1 §3.1.0 [MQTT-3.1.0-2], 5.0 §3.1: a second CONNECT is a protocol violation.
                packet.problems.append(Problem(.error, .secondConnect, "A second CONNECT on this connection",
                                               reference: Spec(version: packet.connectVersion ?? .v3_1_1).ref("3.1.0", "3.1")))
            } else {
                if let v = packet.connectVersion {
                    session.version = v
                    session.versionSource = .connect
                }
                if let maximum = packet.topicAliasMaximum { session.toClient.topicAliasMaximum = maximum }
            }
            if direction == .toClient {
                packet.problems.append(Problem(.warning, .connectFromServer, "CONNECT sent by the server side of the connection"))
            }
            session.sawConnect = true
            return packet
        }

        if let version = session.version {
            let packet = decode(frame, version: version, from: direction)
            if type == .connack, let maximum = packet.topicAliasMaximum, direction == .toClient {
                session.toServer.topicAliasMaximum = maximum
            }
            return packet
        }

        // 5.0 on a copy of the direction's state, then 3.1.1 on the state itself, which that
        // copy has left alone by then: each change to a shared copy copies all its kept topics
        // (two whole copies a new topic, with two copies of the state).
        var state5 = session[direction]
        var packet5 = MQTTDecoder.decodeTypedFrame(frame, version: .v5, state: &state5)
        var packet311 = decode(frame, version: .v3_1_1, from: direction)
        if packet311.hasErrors, !packet5.hasErrors {
            session.version = .v5
            session.versionSource = .guessed
            session[direction] = state5
            packet5.problems.insert(Problem(.note, .versionGuessed,
                                            "No CONNECT seen: this packet parses cleanly only as MQTT 5.0, so the connection is decoded as 5.0"), at: 0)
            guessNoted = true
            if type == .connack, let maximum = packet5.topicAliasMaximum, direction == .toClient {
                session.toServer.topicAliasMaximum = maximum
            }
            return packet5
        }
        if !packet311.hasErrors, packet5.hasErrors {
            session.version = .v3_1_1
            session.versionSource = .guessed
        }
        if !guessNoted {
            guessNoted = true
            packet311.problems.insert(Problem(.note, .versionGuessed,
                                              "No CONNECT seen and no version given: decoded as MQTT 3.1.1"), at: 0)
        }
        return packet311
    }

    /// A frame decoded with `version` against the direction's own state, changed in place (a
    /// copy would copy its kept topics on their next change).
    private mutating func decode(_ frame: MQTTFrame, version: MQTTVersion, from direction: Direction) -> MQTTPacket {
        direction == .toServer
            ? MQTTDecoder.decodeTypedFrame(frame, version: version, state: &session.toServer)
            : MQTTDecoder.decodeTypedFrame(frame, version: version, state: &session.toClient)
    }
}
