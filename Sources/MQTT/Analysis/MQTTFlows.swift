import Dissection

/// What the flow analysis says of one PDU: the step of a QoS 1 or 2 message flow it is, and how
/// it links to the PUBLISH that began the flow. A typed value; its words and its `flow` object
/// are a view of it (`MQTTFlowNote+View.swift`).
public struct MQTTFlowNote: Sendable, Equatable {
    public enum State: String, Sendable {
        /// A QoS 1 or 2 PUBLISH that begins a flow.
        case sent
        /// A PUBLISH with DUP set that repeats the PUBLISH of a flow in flight.
        case retransmitted
        /// PUBACK: the QoS 1 flow is done.
        case acknowledged
        /// PUBREC: the receiver has the QoS 2 message.
        case received
        /// PUBREL: the sender lets the receiver deliver it.
        case released
        /// PUBCOMP: the QoS 2 flow is done.
        case completed
        /// A PUBACK, PUBREC or PUBCOMP with a failure reason code (MQTT 5.0): the flow ends there.
        case refused
        /// An acknowledgement with no flow of its packet identifier in flight.
        case unexpected
    }

    public var state: State
    public var packetType: MQTTPacketType
    public var packetID: Int
    public var qos: Int?
    /// The PUBLISH the flow began with.
    public var publishFrame: Int?
    /// The flow's step before this one (the PUBREC a PUBREL answers, the PUBREL a PUBCOMP answers).
    public var previousFrame: Int?
    /// Time since the PUBLISH, microseconds.
    public var latency: Int?
    /// A PUBLISH that reused the packet identifier of a flow still open: that flow's PUBLISH.
    public var reusedFrom: Int? {
        get { rare.value?.reusedFrom }
        set { rare.change(from: RareParts()) { $0.reusedFrom = newValue } }
    }
    /// A PUBLISH sent while as many flows as the receiver's Receive Maximum were in flight:
    /// the flows in flight with it, and the maximum.
    public var overReceiveMaximum: ReceiveMaximumExcess? {
        get { rare.value?.overReceiveMaximum }
        set { rare.change(from: RareParts()) { $0.overReceiveMaximum = newValue } }
    }

    public struct ReceiveMaximumExcess: Sendable, Equatable {
        public var inFlight: Int
        public var maximum: Int
    }

    /// A failure reason code (`refused`).
    public var reasonCode: MQTTReasonCode? {
        get { rare.value?.reasonCode }
        set { rare.change(from: RareParts()) { $0.reasonCode = newValue } }
    }
    /// No flow in flight (`unexpected`), and the capture started inside the connection: its
    /// PUBLISH may predate the capture.
    public var mayPredateCapture: Bool {
        get { rare.value?.mayPredateCapture ?? false }
        set { rare.change(from: RareParts()) { $0.mayPredateCapture = newValue } }
    }
    /// What the PUBLISH's flow came to later in the captures (a run in two passes, `sent`).
    public var later: MQTTFlowLinks.Link? {
        get { rare.value?.later }
        set { rare.change(from: RareParts()) { $0.later = newValue } }
    }

    /// The parts few notes have, boxed: a note is made for every PUBLISH and acknowledgement and
    /// copied on its way (180 bytes with them inline, 88 without).
    fileprivate var rare = OutOfLine<RareParts>()

    fileprivate struct RareParts: Sendable, Equatable {
        var reusedFrom: Int?
        var overReceiveMaximum: ReceiveMaximumExcess?
        var reasonCode: MQTTReasonCode?
        var mayPredateCapture = false
        var later: MQTTFlowLinks.Link?
    }
}

/// Follows each QoS 1 and 2 PUBLISH of one connection, in each direction, through its
/// acknowledgements by packet identifier (MQTT 3.1.1 §4.3, 5.0 §4.3): PUBLISH → PUBACK, and
/// PUBLISH → PUBREC → PUBREL → PUBCOMP. It times each step from the PUBLISH, links a PUBLISH
/// with DUP set to the one it repeats, and finds acknowledgements with nothing in flight, packet
/// identifiers reused while their flow is open, more flows in flight than the receiver's Receive
/// Maximum (5.0 §3.3.4), failure reason codes, and the flows a connection leaves open when it ends.
///
/// Memory: the flows in flight, at most one per packet identifier and direction.
public struct MQTTFlows: Sendable {
    /// A flow in flight: 32 bytes (a subscriber that falls behind has tens of thousands).
    struct Flow: Sendable {
        var publishFrame: Int
        /// The PUBLISH's capture time, nanoseconds since 1970.
        var publishTime: Int64
        /// The last acknowledgement seen: PUBREC, then PUBREL.
        var stepFrame = 0
        var qos: UInt8
        var step = Step.published
    }

    enum Step: String, Sendable {
        case published, received, released
    }

    /// Flows of PUBLISHes the client sent, and of those the server sent, by packet identifier.
    private var fromClient = IntTable<Flow>()
    private var fromServer = IntTable<Flow>()
    /// The Receive Maximum each receiver announced (5.0): the server's (CONNACK) bounds the
    /// client's flows, the client's (CONNECT) the server's. 65,535 when absent.
    private var serverReceiveMaximum = 65_535
    private var clientReceiveMaximum = 65_535
    private var version: MQTTVersion = .v3_1_1
    private var disconnectFrame: Int?
    private let startedMidStream: Bool
    /// Flows followed in flight per direction at most (`MQTTOptions.maxFlowsInFlight`); past it, a
    /// direction's new flows are not followed, and acknowledgements it cannot match are not flagged.
    private let maxInFlight: Int
    private var clientOverflowed = false
    private var serverOverflowed = false
    public private(set) var statistics = FlowStatistics()
    /// Records found and not yet taken.
    public internal(set) var records: [AnalysisRecord] = []

    /// The run's links, in a run in two passes, and this connection's number in the run.
    private let links: MQTTFlowLinking?
    private let stream: Int

    public init(startedMidStream: Bool, maxInFlight: Int = MQTTOptions.defaultMaxFlowsInFlight,
                links: MQTTFlowLinking? = nil, stream: Int = 0) {
        self.startedMidStream = startedMidStream
        self.maxInFlight = max(1, maxInFlight)
        self.links = links
        self.stream = stream
    }

    /// In the first pass of two: what the flow of the PUBLISH with `id` in `frame` came to.
    private func collect(_ frame: Int, _ id: Int, _ body: (inout MQTTFlowLinks.Link) -> Void) {
        if case .collect(let table) = links { table.update(stream: stream, frame: frame, packetID: id, body) }
    }

    /// The PDU's step, if it is one; records of what it shows are added to `records`.
    public mutating func observe(_ packet: MQTTPacket, from direction: Direction, frame: Int, time: Timestamp) -> MQTTFlowNote? {
        version = packet.version
        // By type and the values kept beside the content: the content is not read (a copy).
        switch packet.type {
        case .connect:
            if let maximum = packet.receiveMaximum, maximum > 0 { clientReceiveMaximum = maximum }
            return nil
        case .connack:
            if let maximum = packet.receiveMaximum, maximum > 0 { serverReceiveMaximum = maximum }
            return nil
        case .disconnect:
            if direction == .toServer || disconnectFrame == nil { disconnectFrame = frame }
            return nil
        case .publish:
            guard let id = packet.flowPacketID else { return nil }
            return published(qos: Int(packet.flags >> 1 & 3), dup: packet.flags & 0x08 != 0, id: id, from: direction, frame: frame, time: time)
        case .puback, .pubrec, .pubrel, .pubcomp:
            guard let id = packet.flowPacketID else { return nil }
            let note = responded(packet.type, failure: packet.failureReason, id: id, from: direction, frame: frame, time: time)
            if packet.noMatchingSubscribers {
                // MQTT 5.0 §3.4.2.1: accepted, but no subscription matched: the message went nowhere.
                let publish = note?.publishFrame.map { " of PUBLISH #\($0)" } ?? ""
                records.append(AnalysisRecord(
                    protocolName: "mqtt", kind: .undelivered, frames: (note?.publishFrame.map { [$0] } ?? []) + [frame],
                    message: "\(packet.type.name) #\(frame)\(publish) says 0x10 No matching subscribers: the broker delivered the message to no one",
                    reference: "MQTT 5.0 §3.4.2.1",
                    fields: [Field("packet_id", "Packet Identifier", .int(id))]))
            }
            return note
        default:
            return nil
        }
    }

    private mutating func published(qos: Int, dup: Bool, id: Int, from direction: Direction, frame: Int, time: Timestamp) -> MQTTFlowNote? {
        var note = MQTTFlowNote(state: .sent, packetType: .publish, packetID: id, qos: qos)
        let spec = version == .v5 ? ("MQTT 5.0", "2.2.1") : ("MQTT 3.1.1", "2.3.1")
        if let open = direction == .toServer ? fromClient[id] : fromServer[id] {
            // A DUP repeat at any step (a PUBREC lost on its way back leaves the sender resending).
            if dup && Int(open.qos) == qos {
                note.state = .retransmitted
                note.publishFrame = open.publishFrame
                note.latency = microseconds(from: open.publishTime, to: time)
                return note
            }
            // A new message under the identifier of a flow still open: the old flow is given up.
            note.reusedFrom = open.publishFrame
            records.append(AnalysisRecord(
                protocolName: "mqtt", kind: .packetIDReused, frames: [open.publishFrame, frame],
                message: "PUBLISH #\(frame) reuses packet identifier \(id) while the flow of PUBLISH #\(open.publishFrame) is still open (\(open.step == .published ? "not acknowledged" : "at \(open.step.rawValue)"))",
                reference: "\(spec.0) §\(spec.1)",
                fields: [Field("packet_id", "Packet Identifier", .int(id)), Field("open_frame", "Open Flow", .int(open.publishFrame))]))
            statistics.incomplete += 1
            removeFlow(id, sentBy: direction)
        }
        let inFlight = direction == .toServer ? fromClient.count : fromServer.count
        let maximum = direction == .toServer ? serverReceiveMaximum : clientReceiveMaximum
        if version == .v5, inFlight >= maximum {
            note.overReceiveMaximum = MQTTFlowNote.ReceiveMaximumExcess(inFlight: inFlight + 1, maximum: maximum)
            records.append(AnalysisRecord(
                protocolName: "mqtt", kind: .receiveMaximumExceeded, frames: [frame],
                message: "PUBLISH #\(frame) makes \(inFlight + 1) QoS 1 and 2 messages in flight, more than the receiver's Receive Maximum of \(maximum)",
                reference: "MQTT 5.0 §3.3.4",
                fields: [Field("in_flight", "In Flight", .int(inFlight + 1)), Field("receive_maximum", "Receive Maximum", .int(maximum))]))
        }
        if inFlight >= maxInFlight {
            let sender = direction == .toServer ? "client" : "server"
            if !(direction == .toServer ? clientOverflowed : serverOverflowed) {
                records.append(AnalysisRecord(
                    protocolName: "mqtt", kind: .flowsNotFollowed, frames: [frame],
                    message: "PUBLISH #\(frame) would make more than \(maxInFlight) QoS 1 and 2 flows of the \(sender) in flight: it and the \(sender)'s later flows beyond that are not followed (--max-flows-in-flight), and acknowledgements that match none are not flagged"))
            }
            if direction == .toServer { clientOverflowed = true } else { serverOverflowed = true }
            return nil
        }
        let flow = Flow(publishFrame: frame, publishTime: time.nanosecondsSince1970, qos: UInt8(qos))
        if direction == .toServer { fromClient[id] = flow } else { fromServer[id] = flow }
        if case .read(let table) = links { note.later = table.link(stream: stream, frame: frame, packetID: id) }
        return note
    }

    private mutating func responded(_ type: MQTTPacketType, failure: MQTTReasonCode?, id: Int, from direction: Direction,
                                    frame: Int, time: Timestamp) -> MQTTFlowNote? {
        var note = MQTTFlowNote(state: .unexpected, packetType: type, packetID: id)
        // PUBREL comes from the PUBLISH's sender; PUBACK, PUBREC and PUBCOMP from its receiver.
        let sender = type == .pubrel ? direction : direction.reversed
        let expected: (qos: Int, step: Step)
        switch type {
        case .puback: expected = (1, .published)
        case .pubrec: expected = (2, .published)
        case .pubrel: expected = (2, .received)
        default: expected = (2, .released)
        }
        guard let flow = sender == .toServer ? fromClient[id] : fromServer[id], Int(flow.qos) == expected.qos,
              flow.step == expected.step || (type == .pubrel && flow.step == .released)
        else {
            // Its flow may be one not followed.
            if sender == .toServer ? clientOverflowed : serverOverflowed { return nil }
            note.mayPredateCapture = startedMidStream
            let what = type == .pubrel ? "QoS 2 PUBLISH with a PUBREC" : expected.qos == 1 ? "QoS 1 PUBLISH" : "QoS 2 PUBLISH"
            records.append(AnalysisRecord(
                protocolName: "mqtt", kind: .unexpectedAcknowledgement, frames: [frame],
                message: "\(type.name) #\(frame) for packet identifier \(id), but no \(what) with it is in flight"
                    + (startedMidStream ? " (the capture starts inside the connection: it may predate the capture)" : ""),
                reference: version == .v5 ? "MQTT 5.0 §4.3" : "MQTT 3.1.1 §4.3",
                fields: [Field("packet_id", "Packet Identifier", .int(id)), Field("packet_type", "Packet Type", .string(type.name))]))
            return note
        }
        note.qos = Int(flow.qos)
        note.publishFrame = flow.publishFrame
        note.latency = microseconds(from: flow.publishTime, to: time)
        if type == .pubrel || type == .pubcomp { note.previousFrame = flow.stepFrame }
        // In the first pass of two: the PUBLISH's acknowledgement (PUBACK or PUBREC) or PUBCOMP.
        if type != .pubrel {
            let latency = note.latency, refused = failure != nil
            collect(flow.publishFrame, id) { link in
                if type == .pubcomp {
                    link.completeFrame = frame
                    link.completeLatency = latency
                } else {
                    link.ackFrame = frame
                    link.ackLatency = latency
                }
                if refused { link.refused = true }
            }
        }
        if let code = failure, type != .pubrel {
            note.state = .refused
            note.reasonCode = code
            records.append(AnalysisRecord(
                protocolName: "mqtt", kind: .refused, frames: [flow.publishFrame, frame],
                message: "\(type.name) #\(frame) refuses PUBLISH #\(flow.publishFrame) (packet identifier \(id)): 0x\(hexByte(code.rawValue)) \(code.name(in: type))",
                reference: "MQTT 5.0 §4.3",
                fields: [Field("packet_id", "Packet Identifier", .int(id)), Field("reason_code", "Reason Code", .int(Int(code.rawValue)))]))
            statistics.incomplete += 1
            removeFlow(id, sentBy: sender)
            return note
        }
        switch type {
        case .puback, .pubcomp:
            note.state = type == .puback ? .acknowledged : .completed
            statistics.completed += 1
            if let latency = note.latency { statistics.latency.record(latency) }
            removeFlow(id, sentBy: sender)
        case .pubrec:
            note.state = .received
            setStep(.received, frame: frame, of: id, sentBy: sender)
        default:
            note.state = .released
            setStep(.released, frame: frame, of: id, sentBy: sender)
        }
        return note
    }

    /// Takes the records found since the last call.
    public mutating func takeRecords(into out: inout [AnalysisRecord]) {
        guard !records.isEmpty else { return }
        out.append(contentsOf: records)
        records.removeAll(keepingCapacity: true)
    }

    /// The connection ended (`reason`, in words): a record for each flow left open, in the order
    /// they began (the client's first), handed to `record` one at a time, and the statistics.
    public mutating func end(_ reason: String, record: (AnalysisRecord) -> Void) -> FlowStatistics {
        for r in records { record(r) }
        records.removeAll()
        // Most connections end with no flow open: then nothing is said (the words of the end
        // cost more than the rest of a short connection's flows).
        guard fromClient.count > 0 || fromServer.count > 0 else { return statistics }
        let ended = disconnectFrame.map { "before the DISCONNECT #\($0)" } ?? "before the connection ended (\(reason))"
        for (sender, flows) in [("client", fromClient), ("server", fromServer)] {
            // In the order they began.
            var open: [(id: Int, flow: Flow)] = []
            open.reserveCapacity(flows.count)
            flows.forEach { open.append(($0, $1)) }
            open.sort { ($0.flow.publishFrame, $0.id) < ($1.flow.publishFrame, $1.id) }
            for (id, flow) in open {
                statistics.incomplete += 1
                var frames = [flow.publishFrame]
                if flow.step != .published { frames.append(flow.stepFrame) }
                let missing: String
                switch (flow.qos, flow.step) {
                case (1, _): missing = "PUBACK never sent"
                case (_, .published): missing = "PUBREC never sent"
                case (_, .received): missing = "PUBREL never sent"
                default: missing = "PUBCOMP never sent"
                }
                let reached = flow.step == .published ? "" : flow.step == .received ? ", got PUBREC #\(flow.stepFrame)" : ", released by PUBREL #\(flow.stepFrame)"
                let never: MQTTPacketType = flow.qos == 1 ? .puback : flow.step == .published ? .pubrec : flow.step == .received ? .pubrel : .pubcomp
                collect(flow.publishFrame, id) { $0.neverSent = never }
                record(AnalysisRecord(
                    protocolName: "mqtt", kind: flow.step == .published ? .unacknowledged : .incompleteFlow, frames: frames,
                    message: "QoS \(flow.qos) PUBLISH #\(flow.publishFrame) (packet identifier \(id), from the \(sender))\(reached): \(missing) \(ended)",
                    reference: version == .v5 ? "MQTT 5.0 §4.3" : "MQTT 3.1.1 §4.3",
                    fields: [Field("packet_id", "Packet Identifier", .int(id)), Field("qos", "QoS", .int(Int(flow.qos))),
                             Field("step", "Step Reached", .string(flow.step.rawValue)), Field("sender", "Sender", .string(sender))]))
            }
        }
        fromClient.removeAll()
        fromServer.removeAll()
        return statistics
    }

    // MARK: - The flows in flight

    private mutating func removeFlow(_ id: Int, sentBy direction: Direction) {
        if direction == .toServer { fromClient.removeValue(forKey: id) } else { fromServer.removeValue(forKey: id) }
    }

    private mutating func setStep(_ step: Step, frame: Int, of id: Int, sentBy direction: Direction) {
        let change = { (flow: inout Flow) in
            flow.step = step
            flow.stepFrame = frame
        }
        if direction == .toServer { fromClient.modify(id, change) } else { fromServer.modify(id, change) }
    }
}

/// Microseconds from `a` (nanoseconds since 1970) to `b`, rounded down; 0 when `b` is earlier (a
/// capture out of order).
func microseconds(from a: Int64, to b: Timestamp) -> Int {
    max(0, Int((b.nanosecondsSince1970 &- a) / 1000))
}
