import Dissection

/// Decodes both directions of one AMQP 0-9-1 connection.
///
/// Each direction has its own `AMQPFramer`; the connection keeps what spans frames: the
/// negotiated frame-max and channel-max (connection.tune / tune-ok), messages being assembled
/// per channel and direction, and each channel's last requests, which explain a close.
public struct AMQPConnectionDissector: StreamDissector {
    private struct ChannelKey: Hashable {
        var direction: Direction
        var channel: UInt16

        /// The key as one word: the channel, and the direction above it.
        var code: UInt32 { UInt32(channel) | (direction == .toServer ? 0x1_0000 : 0) }

        init(direction: Direction, channel: UInt16) {
            self.direction = direction
            self.channel = channel
        }

        /// The key of a `code`.
        init(code: UInt32) {
            self.init(direction: code & 0x1_0000 != 0 ? .toServer : .toClient, channel: UInt16(truncatingIfNeeded: code))
        }
    }

    /// Values by channel and direction in a short list, oldest first, searched from the front:
    /// a connection uses a few channels, and a dictionary hashed the key (a few hundred
    /// instructions) several times per frame. Values are changed in place (`slot`), not copied out
    /// and back.
    private struct ChannelTable<Value> {
        private(set) var codes: [UInt32] = []
        var values: [Value] = []

        /// The index of `key`'s value, if it has one.
        func slot(_ key: ChannelKey) -> Int? {
            let code = key.code
            return codes.withUnsafeBufferPointer { c in
                for i in 0..<c.count where c[i] == code { return i }
                return nil
            }
        }

        subscript(key: ChannelKey) -> Value? {
            get { slot(key).map { values[$0] } }
            set {
                if let i = slot(key) {
                    if let newValue { values[i] = newValue } else { remove(at: i) }
                } else if let newValue {
                    codes.append(key.code)
                    values.append(newValue)
                }
            }
        }

        mutating func remove(at i: Int) {
            _ = take(at: i)
        }

        /// Adds `value` for a key that has none (`slot(key)` is nil), moved in, not copied.
        @inline(__always)
        mutating func add(_ key: ChannelKey, _ value: consuming Value) {
            codes.append(key.code)
            values.append(value)
        }

        /// Removes the value at `i` and returns it, moved out (not copied, then destroyed).
        @inline(__always)
        mutating func take(at i: Int) -> Value {
            codes.remove(at: i)
            return values.remove(at: i)
        }

        /// Removes the values of one direction, keeping the others in order.
        mutating func removeAll(in direction: Direction) {
            var i = 0
            while i < codes.count {
                if ChannelKey(code: codes[i]).direction == direction { remove(at: i) } else { i += 1 }
            }
        }
    }

    private let options: AMQPOptions
    /// How its frames are shown (Render's `AMQPViews`, whose `init(info:options:)` hands over
    /// the standard view).
    private let view: any AMQPFrameView
    private let info: ConnectionInfo
    private var decoder: AMQPFrameDecoder
    private var toServer: AMQPFramer
    private var toClient: AMQPFramer
    /// Whether a client stream without a protocol header is worth a problem.
    private let expectsProtocolHeader: Bool
    private var sawFirstToServer = false
    private var sawFirstToClient = false
    /// The client's protocol header, to tell a server's echo from a refusal.
    private var clientHeader: AMQPProtocolHeader?

    private var proposedFrameMax: Int?
    private var frameMax: Int?
    private var channelMax = 0
    /// A set of channel numbers as bits: asked for every frame, where a `Set` hashed the number.
    private struct ChannelBits {
        private var words: [UInt64] = []

        subscript(channel: UInt16) -> Bool {
            get {
                let w = Int(channel) >> 6
                return w < words.count && words[w] >> UInt64(channel & 63) & 1 == 1
            }
            set {
                let w = Int(channel) >> 6
                if w >= words.count {
                    guard newValue else { return }
                    words += [UInt64](repeating: 0, count: w + 1 - words.count)
                }
                if newValue { words[w] |= 1 << UInt64(channel & 63) } else { words[w] &= ~(1 << UInt64(channel & 63)) }
            }
        }
    }

    private var messages = ChannelTable<AMQPMessageAssembly>()
    /// The last request of each method per channel and direction, for close explanations:
    /// the typed method (one reference).
    private var requests = ChannelTable<[AMQPMethodID: AMQPMethod]>()
    /// The frames of those requests (and of the channel's last basic.publish): what a close answers.
    private var requestFrames = ChannelTable<[AMQPMethodID: Int]>()
    /// The last basic.publish of each channel and direction, apart from `requests`: a publisher
    /// sends one per message, and storing each into a dictionary cost several hundred
    /// instructions; they join the rest only when a frame reads its peer's requests.
    private var lastPublish = ChannelTable<AMQPMethod>()
    /// Directions that lost frame sync at some point: content out of context is expected there.
    private var lostSyncToServer = false
    private var lostSyncToClient = false
    /// Channels opened (channel.open) and not yet closed (channel.close-ok), when the capture
    /// showed the connection's start.
    private var openChannels = ChannelBits()
    /// Channels the client put in confirm mode (confirm.select), with the number of its last publish.
    private var confirms = ChannelTable<Confirms>()
    /// A channel in confirm mode: its last publish's number, and the publishes awaiting the
    /// broker's confirm, oldest first.
    private struct Confirms {
        var last = 0
        var pending: [Pending] = []

        struct Pending {
            var number: Int
            var frame: Int
            var time: Timestamp
            /// Its place among the connection's publishes and deliveries in its frame (`AMQPLinks`).
            var place = 0
        }
    }
    /// Where the bytes being dissected were captured (`locate`): the analysis links frames by it.
    private var frame = 0
    private var time = Timestamp(seconds: 0, nanoseconds: 0)
    /// The analysis's records found since `takeRecords` last took them.
    private var records: [AnalysisRecord] = []
    /// Publisher confirms: publishes confirmed (or nacked) with the time to it, and those left
    /// unconfirmed (the connection's `ConnectionAnalysis.flows`).
    private var confirmStatistics = FlowStatistics()
    /// Channels in transaction mode (tx.select): the client's publishes and acknowledgements since
    /// its last commit or rollback.
    private var transactions = ChannelTable<(publishes: Int, acknowledgements: Int)>()
    /// Where the broker stopped this connection's publishers (connection.blocked), and each
    /// channel's flow (channel.flow active=false), while it lasts.
    private var blockedAt: (frame: Int, time: Timestamp, reason: String?)?
    private var flowStopped = ChannelTable<(frame: Int, time: Timestamp)>()
    /// The last publish or delivery method's frame and its place among those of that frame:
    /// what `AMQPLinks` are keyed by.
    private var linked = (frame: -1, place: 0)
    /// Which queue each delivery and each client acknowledgement concerns.
    private var queues: AMQPQueueTracker
    /// Whether messages keep their content header's payload for the JSON `properties` object of
    /// their `message` field (`.json` and `.tree`; text and tables show only a summary line).
    private let keepsHeaders: Bool

    package init(info: ConnectionInfo, options: AMQPOptions, view: any AMQPFrameView) {
        self.init(info: info, options: options, view: view, expectsProtocolHeader: true)
    }

    package init(info: ConnectionInfo, options: AMQPOptions, view: any AMQPFrameView, expectsProtocolHeader: Bool) {
        self.view = view
        self.info = info
        self.options = options
        self.decoder = AMQPFrameDecoder(options: options)
        self.queues = AMQPQueueTracker(maxOutstanding: options.maxTrackedDeliveries)
        self.toServer = AMQPFramer(options: options, atStreamStart: !info.startedMidStream)
        self.toClient = AMQPFramer(options: options, atStreamStart: !info.startedMidStream)
        self.expectsProtocolHeader = expectsProtocolHeader && !info.startedMidStream
        switch options.detail {
        case .json, .tree: keepsHeaders = true
        case .text, .facts: keepsHeaders = false
        }
    }

    public var analyses: Bool { options.analysis }

    public mutating func locate(frame: Int, time: Timestamp) {
        self.frame = frame
        self.time = time
    }

    public mutating func takeRecords(into records: inout [AnalysisRecord]) {
        guard !self.records.isEmpty else { return }
        records += self.records
        self.records.removeAll()
    }

    /// The connection ended: what each channel still open left (deliveries unacknowledged,
    /// publishes unconfirmed, a consumer held at its prefetch limit).
    public mutating func end(_ reason: String, record: (AnalysisRecord) -> Void) -> ConnectionAnalysis? {
        guard options.analysis else { return nil }
        let ended = "the connection ended (\(reason))"
        for left in queues.leftOpen() { recordLeft(left, ended: ended) }
        for (code, state) in zip(confirms.codes, confirms.values) {
            recordUnconfirmed(state, channel: ChannelKey(code: code).channel, ended: ended)
        }
        // RabbitMQ's connection.blocked, or a channel.flow that stopped a channel, never lifted.
        if let blocked = blockedAt {
            recordHeld("the broker blocked the connection's publishers at #\(blocked.frame)\(blocked.reason.map { " (\($0))" } ?? "")",
                       since: blocked, ended: ended)
        }
        for (code, stopped) in zip(flowStopped.codes, flowStopped.values) {
            recordHeld("channel \(ChannelKey(code: code).channel)'s flow was stopped at #\(stopped.frame)",
                       since: (stopped.frame, stopped.time, nil), ended: ended)
        }
        for r in records { record(r) }
        records.removeAll()
        let statistics = confirmStatistics
        return statistics.completed + statistics.incomplete > 0 ? ConnectionAnalysis(flows: statistics) : nil
    }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU]) {
        _ = receive(bytes, from: direction, into: &output, limit: .max)
    }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        guard !bytes.isEmpty else { return false }
        withFramer(direction) { $0.append(bytes) }
        return receiveMore(from: direction, into: &output, limit: limit)
    }

    /// The units framed so far, up to `limit`: the framer keeps the rest. Each unit is processed
    /// as it is framed (no array of them per segment), so the framer resynchronises with the
    /// limits negotiated by the frames before.
    public mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        drain(direction, into: &output, limit: limit)
    }

    /// With `PDUDetail.facts`: the frames with no problem (`AMQPFrameView.counted`).
    public var makesCountedPDUs: Bool { options.detail == .facts }

    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        guard !bytes.isEmpty else { return false }
        withFramer(direction) { $0.append(bytes) }
        return receiveMore(from: direction, into: &output, limit: limit)
    }

    public mutating func receiveMore(from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        if output.protocolName != "amqp" { output.protocolName = "amqp" }
        return drain(direction, into: &output, limit: limit)
    }

    /// The units framed so far, up to `limit`, each processed as it is framed. A whole frame
    /// in sync comes straight from the framer (`AMQPFramer.nextCleanFrame`), without the enum
    /// of `next` wrapped around it.
    private mutating func drain<Output: PDUOutput>(_ direction: Direction, into output: inout Output, limit: Int) -> Bool {
        var made = 0
        var decoded = AMQPDecodedFrame(frame: AMQPRawFrame(type: .heartbeat, channel: 0, size: 0, bytes: [], payload: [], frameEnd: nil,
                                                           payloadNotHeld: 0, payloadLost: 0), problems: [])
        while made < limit {
            made += 1
            if direction == .toServer ? toServer.nextCleanFrame(into: &decoded.frame) : toClient.nextCleanFrame(into: &decoded.frame) {
                take(&decoded, from: direction, into: &output)
                // Emptied for the next frame, which the framer writes over this one.
                decoded.method = nil
                decoded.header = nil
                decoded.problems = []
                continue
            }
            guard let unit = nextUnit(direction) else { return false }
            process(unit, from: direction, into: &output)
        }
        return true
    }

    private mutating func nextUnit(_ direction: Direction) -> AMQPFramedUnit? {
        let step = direction == .toServer ? toServer.next() : toClient.next()
        if case .unit(let unit) = step { return unit }
        return nil
    }

    public mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU]) {
        var units: [AMQPFramedUnit] = []
        var inSync = true
        withFramer(direction) { framer in
            units = framer.gap(count)
            inSync = framer.isInSync
        }
        for unit in units { process(unit, from: direction, into: &output) }
        if !inSync {
            // Whole frames may have been lost: messages in flight in this direction cannot be completed.
            messages.removeAll(in: direction)
        }
    }

    public mutating func finish(_ direction: Direction, into output: inout [DissectedPDU]) {
        var units: [AMQPFramedUnit] = []
        withFramer(direction) { framer in units = framer.finish() }
        for unit in units { process(unit, from: direction, into: &output) }
        let ended = messages
        messages.removeAll(in: direction)
        for (key, message) in zip(ended.codes.map(ChannelKey.init(code:)), ended.values) where key.direction == direction {
            let problem = Problem(.warning, .messageIncomplete,
                                  "the stream ended before the \(message.method.fullName) on channel \(key.channel) was complete: \(message.progress)",
                                  reference: "AMQP 0-9-1 §4.2.6")
            if output.isEmpty {
                output.append(view.incompleteMessage(message, problem: problem, options: options))
            } else {
                output[output.count - 1].problems.append(problem)
            }
        }
    }

    private mutating func withFramer(_ direction: Direction, _ body: (inout AMQPFramer) -> Void) {
        switch direction {
        case .toServer: body(&toServer)
        case .toClient: body(&toClient)
        }
    }

    // MARK: - Connection state

    /// A unit, its PDU put into `output`: a frame through `take`, a protocol header or
    /// unframed bytes as their PDU.
    private mutating func process<Output: PDUOutput>(_ unit: AMQPFramedUnit, from direction: Direction, into output: inout Output) {
        switch unit {
        case .frame(let framed):
            var decoded = AMQPDecodedFrame(frame: framed.frame, problems: framed.problems)
            take(&decoded, from: direction, into: &output)
        case .protocolHeader(let bytes, let problems):
            _ = markFirst(direction)
            let header = AMQPProtocolHeader(bytes)
            var problems = AMQPFrameDecoder.protocolHeaderProblems(header, problems: problems)
            var refused = false
            if direction == .toServer {
                clientHeader = header
            } else if !info.startedMidStream, header == nil || header != clientHeader {
                // AMQP 0-9-1 §4.2.2: a server that rejects the client's header answers with the
                // header of a version it does support, then closes the connection. AMQP 1.0
                // (§2.2) and its SASL layer (§5.3.1) have the server echo an accepted header,
                // so only a header that differs from the client's (or answers none) refuses.
                refused = true
                problems.append(Problem(.warning, .versionRefused,
                                        "the server answered with its own protocol header: it does not support the version the client asked for, and closes the connection",
                                        reference: "AMQP 0-9-1 §4.2.2"))
            }
            output.append(view.protocolHeader(bytes, header: header, problems: problems, refused: refused))
        case .unframed(let count, let problems):
            _ = markFirst(direction)
            output.append(view.unframed(count, problems: problems))
        }
    }

    /// Whether this is the direction's first unit; from now on it is not.
    private mutating func markFirst(_ direction: Direction) -> Bool {
        if direction == .toServer {
            defer { sawFirstToServer = true }
            return !sawFirstToServer
        }
        defer { sawFirstToClient = true }
        return !sawFirstToClient
    }

    /// A frame: decoded into its typed values once, read by the connection's state (`track`),
    /// then put into `output` as one of its views: with `PDUDetail.facts`, a frame with no
    /// problem as what a table counts (`AMQPFrameView.counted`), any other as its field tree.
    ///
    /// `decoded` holds the raw frame and its framing problems, nothing else yet; the caller
    /// reuses it for the next frame (the framer writes the next raw frame into it: a raw frame
    /// copied into a decoded one retained its two slices, and released them when overwritten).
    private mutating func take<Output: PDUOutput>(_ decoded: inout AMQPDecodedFrame, from direction: Direction,
                                                 into output: inout Output) {
        let framing = decoded.problems
        // Whether the framer lost this direction's frame sync before the frame (bytes skipped to
        // resynchronise, or lost in a gap): its problems say so, and only its.
        let lostSync = !framing.isEmpty && framing.contains { $0.code == "resync-skipped" || $0.code == "capture-gap" }
        // Read before `track` changes them (a close-ok forgets the channel's requests).
        var channelRequests: [AMQPMethodID: AMQPMethod] = [:]
        if AMQPConnectionDissector.readsRequests(decoded.frame) {
            let peer = ChannelKey(direction: direction.reversed, channel: decoded.frame.channel)
            channelRequests = requests[peer] ?? [:]
            if let i = lastPublish.slot(peer) { channelRequests[.basicPublish] = lastPublish.values[i] }
        }
        decoder.decode(into: &decoded)
        decoded.summarizeProperties(with: view, options: options)
        if markFirst(direction), direction == .toServer, expectsProtocolHeader, !toServer.sawProtocolHeader {
            decoded.problems.append(Problem(.warning, .noProtocolHeader,
                                            "the client's stream starts with a frame, not the protocol header",
                                            reference: "AMQP 0-9-1 §4.2.2"))
        }
        checkLimits(decoded.frame, &decoded.problems)
        var note = AMQPFrameNote()
        note.analysis = options.analysis
        track(&decoded, &note, from: direction, framerLostSync: lostSync)
        if options.detail == .facts, let counted = view.counted(decoded, note: note) {
            guard let event = note.broker else {
                output.append(counted: counted, orBox: { $0.dissected(protocolName: "amqp") })
                return
            }
            // The broker model reads the event off a box.
            var box = counted.dissected(protocolName: "amqp")
            box.packet = event
            output.append(box)
            return
        }
        var pdu = view.pdu(of: decoded, requests: channelRequests, note: note, options: options)
        // The message a content header belongs to repeats its `properties` object (JSON, the
        // tree) when its body completes it: the header frame's, not made a second time.
        if keepsHeaders, let header = decoded.header, let i = messages.slot(ChannelKey(direction: direction, channel: decoded.frame.channel)),
           let properties = pdu.fields.first(where: { $0.key == "properties" }) {
            messages.values[i].keepProperties(properties, of: header)
        }
        if options.detail == .tree {
            var typed = AMQPFrame(raw: decoded.frame, options: options)
            typed.broker = note.broker
            pdu.packet = typed
        } else if let event = note.broker {
            pdu.packet = event
        }
        output.append(pdu)
    }

    /// Whether decoding the frame reads the peer's earlier requests: connection methods (SASL
    /// secure-ok) and the methods a close explanation looks back from (closes, basic.return).
    private static func readsRequests(_ frame: AMQPRawFrame) -> Bool {
        guard frame.type == .method, frame.payload.count >= 4 else { return false }
        let p = frame.payload.startIndex
        let classID = UInt16(frame.payload[p]) << 8 | UInt16(frame.payload[p + 1])
        let methodID = UInt16(frame.payload[p + 2]) << 8 | UInt16(frame.payload[p + 3])
        return classID == 10 || classID == 20 || (classID == 60 && methodID == 50)
    }

    /// Whether the frame keeps to the negotiated limits (else `checkLimits` finds a problem).
    private func withinLimits(_ frame: AMQPRawFrame) -> Bool {
        if let frameMax, frameMax > 0, frame.wireLength > frameMax { return false }
        if frameMax == nil, expectsProtocolHeader, frame.wireLength > AMQPSpec.frameMinSize { return false }
        return !(channelMax > 0 && Int(frame.channel) > channelMax)
    }

    private func checkLimits(_ frame: AMQPRawFrame, _ problems: inout [Problem]) {
        guard !withinLimits(frame) else { return }
        if let frameMax, frameMax > 0, frame.wireLength > frameMax {
            problems.append(Problem(.error, .frameMaxExceeded,
                                        "frame of \(frame.wireLength) bytes is larger than the negotiated frame-max of \(frameMax)",
                                        reference: "AMQP 0-9-1 connection.tune-ok frame-max", range: 3..<7))
        } else if frameMax == nil, expectsProtocolHeader, frame.wireLength > AMQPSpec.frameMinSize {
            problems.append(Problem(.warning, .frameMinSizeExceeded,
                                        "frame of \(frame.wireLength) bytes before frame-max was negotiated; peers need accept only \(AMQPSpec.frameMinSize)",
                                        reference: "AMQP 0-9-1 connection.tune frame-max (frame-min-size)", range: 3..<7))
        }
        if channelMax > 0, Int(frame.channel) > channelMax {
            problems.append(Problem(.error, .channelMaxExceeded,
                                        "channel \(frame.channel) is above the negotiated channel-max of \(channelMax)",
                                        reference: "AMQP 0-9-1 connection.tune-ok channel-max", range: 1..<3))
        }
    }

    /// Methods whose requests are remembered per channel: the ones a close most often blames.
    /// A switch, not a set: this is asked for every method frame.
    private static func isRemembered(_ id: AMQPMethodID) -> Bool {
        switch (id.classID, id.methodID) {
        case (40, 10), (40, 20), (40, 30), (40, 40): return true             // exchange.declare, delete, bind, unbind
        case (50, 10), (50, 20), (50, 30), (50, 40), (50, 50): return true   // queue.declare, bind, purge, delete, unbind
        case (60, 20), (60, 40), (60, 70): return true                       // basic.consume, publish, get
        default: return false
        }
    }

    /// The connection's state reads a frame's typed values: channels opened and closed,
    /// messages assembled, requests remembered, queues attributed, confirms numbered, limits
    /// negotiated. What it finds goes on the frame: problems on `decoded`, the rest on `note`.
    /// `framerLostSync`: the framer lost the direction's frame sync before this frame.
    private mutating func track(_ decoded: inout AMQPDecodedFrame, _ note: inout AMQPFrameNote, from direction: Direction,
                                framerLostSync: Bool) {
        let frame = decoded.frame
        let key = ChannelKey(direction: direction, channel: frame.channel)
        if framerLostSync {
            if direction == .toServer { lostSyncToServer = true } else { lostSyncToClient = true }
        }
        // AMQP 0-9-1 channel.open: a channel is used only once opened; RabbitMQ answers
        // anything else with 504 CHANNEL_ERROR. Only judged when the capture saw the whole connection.
        if expectsProtocolHeader, !lostSyncToServer, !lostSyncToClient, frame.channel != 0, frame.type != .heartbeat,
           !openChannels[frame.channel], decoded.method?.id != AMQPMethodID(classID: 20, methodID: 10) {
            decoded.problems.append(Problem(.warning, .channelNotOpen,
                                            "channel \(frame.channel) is used without a channel.open seen on this connection",
                                            reference: "AMQP 0-9-1 channel.open", range: 1..<3))
        }
        // Content seen without its start is expected right after a capture starts mid-stream or loses bytes.
        let lostSync = direction == .toServer ? lostSyncToServer : lostSyncToClient
        let severity: Problem.Severity = info.startedMidStream || lostSync ? .note : .error
        switch frame.type {
        case .method:
            // The state reads the typed method by argument (`typed.exchange`): no values by
            // name are made for it.
            // Through optional chains: `if let` of the decoded method copied its whole result.
            guard let spec = decoded.method?.spec, let typed = decoded.method?.method else { return }
            let id = AMQPMethodID(classID: spec.classID, methodID: spec.methodID)
            if let i = messages.slot(key) {
                let pending = messages.values[i]
                messages.remove(at: i)
                decoded.problems.append(Problem(.error, .messageInterrupted,
                                                "\(spec.fullName) arrived on channel \(frame.channel) before the \(pending.method.fullName) ahead of it was complete: \(pending.progress)",
                                                reference: "AMQP 0-9-1 §4.2.6"))
            }
            // A publish's or delivery's place in its frame, and in a run's second pass its link.
            var place = 0
            if (id == .basicPublish && direction == .toServer) || ((id == .basicDeliver || id == .basicGetOK) && direction == .toClient) {
                linked = linked.frame == self.frame ? (self.frame, linked.place + 1) : (self.frame, 0)
                place = linked.place
                if case .read(let links) = options.links, options.analysis {
                    note.link = links.link(stream: info.stream, frame: self.frame, place: place)
                    note.linkIsPublish = id == .basicPublish
                    if id == .basicPublish, note.link?.queues?.isEmpty == true {
                        note.published = (typed.exchange ?? "", typed.routingKey ?? "")
                    }
                }
            }
            if spec.carriesContent {
                messages[key] = AMQPMessageAssembly(method: spec, arguments: typed,
                                                    previewLimit: options.detail == .facts ? 0 : options.bodyPreviewBytes,
                                                    frame: self.frame, place: place)
            }
            if options.analysis {
                // AMQP 0-9-1 channel.close / connection.close class-id and method-id: the method
                // the close answers, found among the peer's remembered requests.
                if (id.classID == 20 && id.methodID == 40) || (id.classID == 10 && id.methodID == 50),
                   let classID = typed.classID, classID != 0, let methodID = typed.methodID {
                    let failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
                    let peer = ChannelKey(direction: direction.reversed, channel: frame.channel)
                    if let requestFrame = requestFrames[peer]?[failed] {
                        note.answers = (failed, requestFrame)
                        // 406 PRECONDITION_FAILED to a declare: the broker model names the earlier declare.
                        if typed.replyCode == 406, failed.classID == 40 || failed.classID == 50, failed.methodID == 10,
                           let request = requests[peer]?[failed],
                           let name = failed.classID == 50 ? request.queue : request.exchange, !name.isEmpty {
                            note.broker = AMQPBrokerEvent(kind: .declareRefused(entity: failed.classID == 50 ? "queue" : "exchange", name: name,
                                                                                requestFrame: requestFrame,
                                                                                replyText: typed.replyText ?? ""),
                                                          channel: frame.channel)
                        }
                    }
                }
                if id == .basicPublish || AMQPConnectionDissector.isRemembered(id) {
                    if let i = requestFrames.slot(key) { requestFrames.values[i][id] = self.frame } else { requestFrames[key] = [id: self.frame] }
                }
            }
            if id == .basicPublish {
                lastPublish[key] = typed
            } else if AMQPConnectionDissector.isRemembered(id) {
                if let i = requests.slot(key) {
                    requests.values[i][id] = typed
                } else {
                    requests[key] = [id: typed]
                }
            }
            if spec.classID == 20, spec.methodName == "close-ok" || spec.methodName == "open" {
                for d in [Direction.toServer, .toClient] {
                    requests[ChannelKey(direction: d, channel: frame.channel)] = nil
                    requestFrames[ChannelKey(direction: d, channel: frame.channel)] = nil
                    lastPublish[ChannelKey(direction: d, channel: frame.channel)] = nil
                }
                openChannels[frame.channel] = spec.methodName == "open"
                if let left = queues.reset(channel: frame.channel), options.analysis {
                    recordLeft(left, ended: spec.methodName == "open" ? "channel \(frame.channel) was opened again"
                                                                       : "channel \(frame.channel) closed")
                }
            }
            if options.analysis, let kind = brokerEvent(id, typed, channel: frame.channel, from: direction) {
                note.broker = AMQPBrokerEvent(kind: kind, channel: frame.channel)
            }
            let collecting: AMQPLinks?
            defer {
                if options.analysis, let ended = note.attribution?.consumerEnded {
                    recordConsumer(ended, channel: frame.channel, ended: "cancelled #\(self.frame)", at: time)
                }
            }
            if case .collect(let links) = options.links, options.analysis { collecting = links } else { collecting = nil }
            note.attribution = queues.track(id, typed, channel: frame.channel, from: direction,
                                            frame: self.frame, time: time, place: place, listsCovered: collecting != nil)
            if let collecting, let settled = note.attribution?.settled {
                let (ackFrame, rejected) = (self.frame, id != .basicAck)
                for delivery in settled.covered {
                    collecting.update(stream: info.stream, frame: delivery.frame, place: delivery.place) {
                        $0.ackFrame = ackFrame
                        $0.ackLatency = max(0, time.microseconds(since: delivery.time))
                        $0.rejected = rejected
                        $0.requeued = settled.requeue
                    }
                }
            }
            if options.analysis, direction == .toClient, id == .basicDeliver || id == .basicGetOK, let queue = note.attribution?.queue {
                note.broker = AMQPBrokerEvent(kind: .delivered(queue: queue, exchange: typed.exchange ?? "",
                                                               routingKey: typed.routingKey ?? ""),
                                              channel: frame.channel)
            }
            negotiate(spec, typed, &decoded.problems)
            trackConfirms(id, typed, channel: frame.channel, from: direction, &note)
            if options.analysis { trackTransactionsAndFlow(id, typed, channel: frame.channel, from: direction, &note) }
        case .header:
            guard let header = decoded.header else { return }
            guard let i = messages.slot(key), messages.values[i].stage == .awaitingHeader else {
                let what = messages[key].map { "while the \($0.method.fullName) before it still expects body frames" }
                    ?? "with no content-bearing method (basic.publish, basic.deliver, basic.get-ok, basic.return) before it"
                messages[key] = nil
                decoded.problems.append(Problem(severity, .unexpectedHeader, "content header on channel \(frame.channel) \(what)",
                                                reference: "AMQP 0-9-1 §4.2.6"))
                return
            }
            if !messages.values[i].isOfMethodClass(header), let classID = header.classID {
                let method = messages.values[i].method
                decoded.problems.append(Problem(.error, .headerClassMismatch,
                                                "content header of class \(classID) follows \(method.fullName) of class \(method.classID)",
                                                reference: "AMQP 0-9-1 §4.2.6.1", range: 7..<9))
            }
            // Changed where it is kept: a copy out and back retained each of its parts.
            messages.values[i].take(header: header, keepingProperties: keepsHeaders)
            if messages.values[i].isComplete {
                // Moved out of the table: handing the table's own value to a mutating method
                // copied every part of it, and the copy and the original were destroyed apart.
                note.message = messages.take(at: i)
                notePublished(&note, channel: frame.channel, from: direction)
            }
        case .body:
            guard let i = messages.slot(key), messages.values[i].stage == .awaitingBody else {
                let what = messages[key] != nil ? "before the content header" : "with no message in progress"
                messages[key] = nil
                decoded.problems.append(Problem(severity, .unexpectedBody, "body frame on channel \(frame.channel) \(what)",
                                                reference: "AMQP 0-9-1 §4.2.6.2"))
                return
            }
            messages.values[i].add(body: frame)
            let (received, bodySize) = (messages.values[i].received, messages.values[i].bodySize)
            if received > bodySize {
                decoded.problems.append(Problem(.error, .bodyOverrun,
                                                "body frames carry \(received) bytes, more than the body-size of \(bodySize) in the content header",
                                                reference: "AMQP 0-9-1 §4.2.6.2"))
            }
            if messages.values[i].isComplete {
                note.message = messages.take(at: i)
                notePublished(&note, channel: frame.channel, from: direction)
            }
        default:
            return
        }
    }

    /// What a transaction's commit or rollback covers (AMQP 0-9-1 tx class: the publishes and
    /// acknowledgements since tx.select or the last commit or rollback), and how long the broker
    /// held publishers back (connection.blocked/unblocked, RabbitMQ's) or a channel's flow
    /// (channel.flow).
    private mutating func trackTransactionsAndFlow(_ id: AMQPMethodID, _ method: AMQPMethod, channel: UInt16,
                                                   from direction: Direction, _ note: inout AMQPFrameNote) {
        let key = ChannelKey(direction: .toServer, channel: channel)
        switch (id.classID, id.methodID, direction) {
        case (90, 10, .toServer):
            transactions[key] = (0, 0)
        case (60, 40, .toServer):
            if let i = transactions.slot(key) { transactions.values[i].publishes += 1 }
        case (60, 80, .toServer), (60, 90, .toServer), (60, 120, .toServer):
            if let i = transactions.slot(key) { transactions.values[i].acknowledgements += 1 }
        case (90, 20, .toServer), (90, 30, .toServer):
            guard let i = transactions.slot(key) else { return }
            let covered = transactions.values[i]
            transactions.values[i] = (0, 0)
            note.transaction = AMQPFrameNote.Transaction(committed: id.methodID == 20, publishes: covered.publishes,
                                                         acknowledgements: covered.acknowledgements)
        case (20, 40, _), (20, 41, _):
            transactions[key] = nil
            flowStopped[key] = nil
        case (10, 60, .toClient):
            blockedAt = (frame, time, method.reason)
        case (10, 61, .toClient):
            guard let blocked = blockedAt else { return }
            blockedAt = nil
            note.held = AMQPFrameNote.Held(what: "the connection's publishers", since: blocked.frame,
                                           duration: max(0, time.microseconds(since: blocked.time)))
        case (20, 20, _):
            // AMQP 0-9-1 channel.flow: active=false stops the peer's content, active=true resumes it.
            if method.active == false {
                flowStopped[key] = (frame, time)
            } else if let i = flowStopped.slot(key) {
                let stopped = flowStopped.take(at: i)
                note.held = AMQPFrameNote.Held(what: "channel \(channel)'s flow", since: stopped.frame,
                                               duration: max(0, time.microseconds(since: stopped.time)))
            }
        default:
            return
        }
    }

    /// A client's basic.publish whose message this frame completed, for the broker model.
    private func notePublished(_ note: inout AMQPFrameNote, channel: UInt16, from direction: Direction) {
        guard options.analysis, direction == .toServer, let publish = note.message?.publishEvent else { return }
        note.broker = AMQPBrokerEvent(kind: .published(publish), channel: channel)
    }

    /// What a method says about the broker's exchanges, queues and bindings, or a message it
    /// returned, for the broker model; nil for the rest.
    private func brokerEvent(_ id: AMQPMethodID, _ method: AMQPMethod, channel: UInt16,
                             from direction: Direction) -> AMQPBrokerEvent.Kind? {
        func binding(queue: Bool) -> AMQPBrokerEvent.Binding {
            queue ? AMQPBrokerEvent.Binding(source: method.exchange ?? "", destination: queues.queueName(method.queue ?? "", channel: channel),
                                            toExchange: false, routingKey: method.routingKey ?? "", arguments: method.arguments)
                  : AMQPBrokerEvent.Binding(source: method.source ?? "", destination: method.destination ?? "", toExchange: true,
                                            routingKey: method.routingKey ?? "", arguments: method.arguments)
        }
        func settings(_ flags: [(String, Bool?)]) -> String {
            var words = flags.map { "\($0.0)=\($0.1 ?? false)" }
            if let arguments = method.arguments, !arguments.entries.isEmpty {
                words.append("arguments " + arguments.entries.map(\.name).joined(separator: ","))
            }
            return words.joined(separator: " ")
        }
        switch (id.classID, id.methodID, direction) {
        case (50, 10, .toServer):
            // A server-named queue (an empty name) is new each time; a passive declare only asks.
            guard method.passive != true, let queue = method.queue, !queue.isEmpty else { return nil }
            return .declareRequested(entity: "queue", name: queue,
                                     settings: settings([("durable", method.durable), ("exclusive", method.exclusive),
                                                         ("auto-delete", method.autoDelete)]))
        case (40, 10, .toServer):
            // A passive declare only asks whether the exchange exists.
            guard method.passive != true else { return nil }
            var alternate: String?
            if let arguments = method.arguments, let value = arguments["alternate-exchange"], case .longString(let s) = value {
                alternate = AMQPText.shortString(s.bytes)
            }
            return .exchangeDeclared(name: method.exchange ?? "", type: method.type ?? "", durable: method.durable ?? false,
                                     autoDelete: method.autoDelete ?? false, isInternal: method.internal ?? false,
                                     alternate: alternate)
        case (40, 20, .toServer): return .exchangeDeleted(name: method.exchange ?? "")
        case (40, 30, .toServer): return .bound(binding(queue: false))
        case (40, 40, .toServer): return .unbound(binding(queue: false))
        case (50, 11, .toClient): return .queueDeclared(name: method.queue ?? "")
        case (50, 20, .toServer): return .bound(binding(queue: true))
        case (50, 50, .toServer): return .unbound(binding(queue: true))
        case (50, 40, .toServer): return .queueDeleted(name: queues.queueName(method.queue ?? "", channel: channel))
        case (60, 50, .toClient):
            return .returned(replyCode: method.replyCode ?? 0, exchange: method.exchange ?? "", routingKey: method.routingKey ?? "")
        default:
            return nil
        }
    }

    /// RabbitMQ's publisher confirms: after confirm.select, the client's publishes on the channel
    /// are numbered from 1, and the broker's basic.ack / basic.nack delivery tags refer to them.
    private mutating func trackConfirms(_ id: AMQPMethodID, _ method: AMQPMethod, channel: UInt16,
                                        from direction: Direction, _ note: inout AMQPFrameNote) {
        let key = ChannelKey(direction: .toServer, channel: channel)
        switch (id.classID, id.methodID) {
        case (85, 10) where direction == .toServer:
            confirms[key] = Confirms()
        case (20, 10), (20, 41):
            guard let i = confirms.slot(key) else { return }
            let state = confirms.take(at: i)
            if options.analysis {
                recordUnconfirmed(state, channel: channel,
                                  ended: id.methodID == 10 ? "channel \(channel) was opened again" : "channel \(channel) closed")
            }
        case (60, 40) where direction == .toServer:
            guard let i = confirms.slot(key) else { return }
            confirms.values[i].last += 1
            let number = confirms.values[i].last
            note.publishSequence = number
            if options.analysis, confirms.values[i].pending.count < options.maxTrackedDeliveries {
                confirms.values[i].pending.append(Confirms.Pending(number: number, frame: frame, time: time, place: linked.place))
            }
        case (60, 80) where direction == .toClient, (60, 120) where direction == .toClient:
            guard let i = confirms.slot(key), let tag = method.deliveryTag else { return }
            let multiple = method.multiple ?? false
            var confirm = AMQPFrameNote.Confirm(acknowledged: id.methodID == 80, multiple: multiple, deliveryTag: tag)
            if options.analysis { confirm.confirmed = settlePublishes(at: i, upTo: tag, multiple: multiple, acknowledged: id.methodID == 80) }
            note.confirm = confirm
        default:
            return
        }
    }

    /// Takes the publishes a broker's confirm covers off the channel's pending ones: the one
    /// numbered `tag`, or with `multiple` every one up to it (AMQP 0-9-1 basic.ack multiple).
    private mutating func settlePublishes(at i: Int, upTo tag: Int, multiple: Bool, acknowledged: Bool) -> AMQPCovered? {
        let pending = confirms.values[i].pending
        // Numbers ascend: the covered ones are a prefix (multiple) or one entry.
        let covered: Range<Int>
        if multiple {
            let end = pending.firstIndex { $0.number > tag } ?? pending.count
            covered = 0..<end
        } else {
            guard let at = pending.firstIndex(where: { $0.number == tag }) else { return nil }
            covered = at..<(at + 1)
        }
        guard !covered.isEmpty else { return nil }
        let first = pending[covered.lowerBound], last = pending[covered.upperBound - 1]
        let oldest = pending[covered].map(\.time).min() ?? first.time
        for publish in pending[covered] {
            confirmStatistics.completed += 1
            confirmStatistics.latency.record(max(0, time.microseconds(since: publish.time)))
        }
        if case .collect(let links) = options.links {
            let (confirmFrame, nacked) = (frame, !acknowledged)
            for publish in pending[covered] {
                links.update(stream: info.stream, frame: publish.frame, place: publish.place) {
                    $0.confirmFrame = confirmFrame
                    $0.confirmLatency = max(0, time.microseconds(since: publish.time))
                    $0.nacked = nacked
                }
            }
        }
        confirms.values[i].pending.removeSubrange(covered)
        return AMQPCovered(count: covered.count, firstFrame: first.frame, lastFrame: last.frame,
                                       latency: max(0, time.microseconds(since: oldest)))
    }

    /// The record of publishers or a channel held back until the connection ended.
    private mutating func recordHeld(_ what: String, since: (frame: Int, time: Timestamp, reason: String?), ended: String) {
        let duration = max(0, time.microseconds(since: since.time))
        records.append(AnalysisRecord(protocolName: "amqp", kind: .stillBlocked, frames: [since.frame],
                                      message: "\(what) and had not lifted it \(latencyText(microseconds: duration)) later, when \(ended)",
                                      reference: "RabbitMQ connection.blocked; AMQP 0-9-1 channel.flow",
                                      fields: [Field("duration_us", "Held for (µs)", .int(duration))]))
    }

    /// The record of a consumer's life: its deliveries, how they were settled, its rate.
    private mutating func recordConsumer(_ c: AMQPQueueTracker.Consumer, channel: UInt16, ended: String, at end: Timestamp) {
        var fields = [Field("consumer_tag", "Consumer tag", .string(c.tag))]
        if let queue = c.queue {
            fields.append(Field("queue", "Queue", .string(queue)))
        } else {
            fields.append(Field("before_capture", "Consumed before the capture", .bool(true)))
        }
        fields += [Field("channel", "Channel", .int(Int(channel))), Field("deliveries", "Deliveries", .int(c.deliveries)),
                      Field("acknowledged", "Acknowledged", .int(c.acknowledged)), Field("rejected", "Rejected or nacked", .int(c.rejected))]
        if c.prefetch > 0 { fields.append(Field("prefetch_count", "Prefetch count", .int(c.prefetch))) }
        let duration = max(0, end.microseconds(since: c.time))
        fields.append(Field("duration_us", "Consuming for (µs)", .int(duration)))
        var rate = ""
        if c.deliveries > 1, let last = c.lastDelivery, case let span = last.microseconds(since: c.time), span > 0 {
            let perSecond = Int((Double(c.deliveries) * 1e6 / Double(span)).rounded())
            fields.append(Field("per_second", "Deliveries a second", .int(perSecond)))
            rate = ", \(perSecond) a second"
        }
        let prefetch = c.prefetch > 0 ? ", prefetch \(c.prefetch)" : ""
        // One from before the capture: its queue is unknown, and so is how long it consumed.
        let consumer = c.queue.map { "consumer '\(c.tag)' on queue '\($0)' (channel \(channel)\(prefetch))" }
            ?? "consumer '\(c.tag)' (its basic.consume came before the capture; channel \(channel)), from its first delivery #\(c.frame)"
        records.append(AnalysisRecord(protocolName: "amqp", kind: .consumer, frames: [c.frame],
                                      message: "\(consumer): \(c.deliveries) deliveries in \(latencyText(microseconds: duration))\(rate); \(c.acknowledged) acknowledged, \(c.rejected) rejected or nacked; \(ended)",
                                      reference: "AMQP 0-9-1 basic.consume", fields: fields))
        // A consumer from before the capture has no prefetch known, so is never held here.
        if c.atLimit > 1, let queue = c.queue {
            recordPrefetchLimited(who: "consumer '\(c.tag)' on queue '\(queue)' (channel \(channel))", global: false,
                                  prefetch: c.prefetch, times: c.atLimit, frames: c.atLimitFrames,
                                  whose: [Field("channel", "Channel", .int(Int(channel))), Field("consumer_tag", "Consumer tag", .string(c.tag)),
                                          Field("queue", "Queue", .string(queue))])
        }
    }

    /// The record of a consumer, or of a channel's consumers together (`global`: a global
    /// basic.qos), that reached its prefetch-count more than once; `whose` are the fields that
    /// say which, before the count's.
    private mutating func recordPrefetchLimited(who: String, global: Bool, prefetch: Int, times: Int, frames: [Int], whose: [Field]) {
        var fields = whose + [Field("prefetch_count", "Prefetch count", .int(prefetch))]
        if global { fields.append(Field("global", "Global", .bool(true))) }
        fields.append(Field("times", "Times at the limit", .int(times)))
        records.append(AnalysisRecord(protocolName: "amqp", kind: .prefetchLimited, frames: frames,
                                      message: "\(who) reached its \(global ? "global " : "")prefetch-count of \(prefetch) unacknowledged deliveries \(times) times: each further delivery waited for an acknowledgement, so \(global ? "its consumers together get" : "it gets") at most \(prefetch) per round trip",
                                      reference: "AMQP 0-9-1 basic.qos prefetch-count", fields: fields))
    }

    /// The records of what a channel left when it closed or the connection ended.
    private mutating func recordLeft(_ left: AMQPQueueTracker.Left, ended: String) {
        for consumer in left.consumers { recordConsumer(consumer, channel: left.channel, ended: "still consuming when \(ended)", at: time) }
        if !left.unacknowledged.isEmpty {
            let count = left.unacknowledged.count
            let queues = Set(left.unacknowledged.map(\.queue))
            // Named when they all came from one queue the capture named.
            let queue = queues.count == 1 ? queues.first ?? nil : nil
            let from = queue.map { " from queue '\($0)'" } ?? ""
            var fields = [Field("channel", "Channel", .int(Int(left.channel))), Field("count", "Deliveries", .int(count))]
            if let queue { fields.append(Field("queue", "Queue", .string(queue))) }
            records.append(AnalysisRecord(protocolName: "amqp", kind: .unacknowledged,
                                          frames: Array(left.unacknowledged.prefix(64).map(\.frame)),
                                          message: "\(ended) with \(count) \(count == 1 ? "delivery" : "deliveries")\(from) not acknowledged: the broker queues \(count == 1 ? "it" : "them") again",
                                          reference: "AMQP 0-9-1 basic.ack", fields: fields))
        }
        if left.atLimit > 1 {
            recordPrefetchLimited(who: "channel \(left.channel)", global: true, prefetch: left.prefetch,
                                  times: left.atLimit, frames: left.atLimitFrames, whose: [Field("channel", "Channel", .int(Int(left.channel)))])
        }
    }

    /// The record of the publishes a channel in confirm mode never had confirmed.
    private mutating func recordUnconfirmed(_ state: Confirms, channel: UInt16, ended: String) {
        guard !state.pending.isEmpty else { return }
        confirmStatistics.incomplete += state.pending.count
        let count = state.pending.count
        records.append(AnalysisRecord(protocolName: "amqp", kind: .unconfirmed, frames: Array(state.pending.prefix(64).map(\.frame)),
                                      message: "\(ended) with \(count) \(count == 1 ? "publish" : "publishes") in confirm mode the broker never confirmed",
                                      reference: "RabbitMQ publisher confirms (confirm.select)",
                                      fields: [Field("channel", "Channel", .int(Int(channel))), Field("count", "Publishes", .int(count))]))
    }

    /// connection.tune proposes limits, connection.tune-ok settles them for both directions.
    private mutating func negotiate(_ spec: AMQPMethodSpec, _ method: AMQPMethod, _ problems: inout [Problem]) {
        guard spec.classID == 10 else { return }
        switch spec.methodName {
        case "tune":
            proposedFrameMax = method.frameMax
        case "tune-ok":
            guard let agreed = method.frameMax else { return }
            if let proposed = proposedFrameMax, proposed > 0, agreed == 0 || agreed > proposed {
                problems.append(Problem(.error, .frameMaxAboveProposal,
                                        "tune-ok asks for frame-max \(agreed == 0 ? "unlimited" : String(agreed)), above the server's \(proposed)",
                                        reference: "AMQP 0-9-1 connection.tune-ok frame-max"))
            }
            if agreed > 0, agreed < AMQPSpec.frameMinSize {
                problems.append(Problem(.error, .frameMaxTooSmall,
                                        "frame-max \(agreed) is below frame-min-size (\(AMQPSpec.frameMinSize))",
                                        reference: "AMQP 0-9-1 connection.tune-ok frame-max"))
            }
            frameMax = agreed
            let agreedChannels = method.channelMax ?? 0
            channelMax = agreedChannels
            toServer.frameMax = agreed
            toServer.channelMax = agreedChannels
            toClient.frameMax = agreed
            toClient.channelMax = agreedChannels
        default:
            return
        }
    }
}
