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

        /// `body` with the value at `i`, in place (reading a member of `values[i]` could copy
        /// the whole value first).
        @inline(__always)
        mutating func withValue<R>(at i: Int, _ body: (inout Value) -> R) -> R {
            body(&values[i])
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
    private let info: ConnectionInfo
    private let decoder: AMQPFrameDecoder
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
    /// The last request of each method per channel and direction, for close explanations.
    private var requests = ChannelTable<[AMQPMethodID: AMQPArgumentValues]>()
    /// The last basic.publish of each channel and direction, apart from `requests`: a publisher
    /// sends one per message, and storing each into a dictionary cost several hundred
    /// instructions; they join the rest only when a frame reads its peer's requests.
    private var lastPublish = ChannelTable<LastPublish>()
    /// A basic.publish remembered: its values, or its arguments as the counted path read them
    /// (the values made only when a frame reads its peer's requests).
    private enum LastPublish {
        case values(AMQPArgumentValues)
        case read(AMQPFrequentArguments)

        var values: AMQPArgumentValues {
            switch self {
            case .values(let values): return values
            case .read(let arguments): return AMQPMethodID.basicPublish.spec.map(arguments.values(of:)) ?? AMQPArgumentValues()
            }
        }
    }
    /// Directions that lost frame sync at some point: content out of context is expected there.
    private var lostSyncToServer = false
    private var lostSyncToClient = false
    /// Channels opened (channel.open) and not yet closed (channel.close-ok), when the capture
    /// showed the connection's start.
    private var openChannels = ChannelBits()
    /// Channels the client put in confirm mode (confirm.select), with the number of its last publish.
    private var confirmSequence = ChannelTable<Int>()
    /// Which queue each delivery and each client acknowledgement concerns.
    private var queues: AMQPQueueTracker
    /// The written fast paths' tree (`PDUDetail.text`, `.json`), frame after frame; copied out per
    /// frame. Both start shared (`ByteSink.unallocated`): each is made before it is first written.
    private var treeSink = ByteSink.unallocated
    /// The written fast paths' summary line, frame after frame; copied out per frame.
    private var lineSink = ByteSink.unallocated
    /// The short strings (consumer tags, exchanges, routing keys) the facts fast path made lately.
    private var shortStrings = RecentStrings()
    /// How fields this connection adds are written into a tree already written as text.
    private let textStyle: TextTree.Style
    /// Whether the detail asks for a written tree (`.text` or `.json`).
    private let writesTree: Bool
    /// Whether messages keep their content header's payload for the JSON `properties` object of
    /// their `message` field (`.json` and `.tree`; text and tables show only a summary line).
    private let keepsHeaders: Bool

    public init(info: ConnectionInfo, options: AMQPOptions = AMQPOptions()) {
        self.init(info: info, options: options, expectsProtocolHeader: true)
    }

    init(info: ConnectionInfo, options: AMQPOptions, expectsProtocolHeader: Bool) {
        self.info = info
        self.options = options
        self.decoder = AMQPFrameDecoder(options: options)
        self.queues = AMQPQueueTracker(maxOutstanding: options.maxTrackedDeliveries)
        self.toServer = AMQPFramer(options: options, atStreamStart: !info.startedMidStream)
        self.toClient = AMQPFramer(options: options, atStreamStart: !info.startedMidStream)
        self.expectsProtocolHeader = expectsProtocolHeader && !info.startedMidStream
        if case .text(let style) = options.detail { textStyle = style } else { textStyle = TextTree.Style() }
        switch options.detail {
        case .text, .json: writesTree = true
        case .tree, .facts: writesTree = false
        }
        switch options.detail {
        case .json, .tree: keepsHeaders = true
        case .text, .facts: keepsHeaders = false
        }
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

    /// With `PDUDetail.facts`: the frequent frames of a connection in its steady state
    /// (`countedFrame(_:from:into:)`).
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

    /// The units framed so far, up to `limit`, each processed as it is framed: with
    /// `PDUDetail.facts`, a clean frame (`AMQPFramer.nextCleanFrame`) the counted path takes
    /// (`countedFrame`) as a `CountedPDU`, the others as the box `process` makes.
    private mutating func drain<Output: PDUOutput>(_ direction: Direction, into output: inout Output, limit: Int) -> Bool {
        var made = 0
        // Without the facts detail there is no counted path: each unit as `process` makes it.
        guard options.detail == .facts else {
            while made < limit {
                guard let unit = nextUnit(direction) else { return false }
                made += 1
                output.append(process(unit, from: direction))
            }
            return true
        }
        var frame = AMQPRawFrame(type: .heartbeat, channel: 0, size: 0, bytes: [], payload: [], frameEnd: nil,
                                 payloadNotHeld: 0, payloadLost: 0)
        while made < limit {
            if direction == .toServer ? toServer.nextCleanFrame(into: &frame) : toClient.nextCleanFrame(into: &frame) {
                made += 1
                if !countedFrame(frame, from: direction, into: &output) {
                    output.append(process(.frame(frame, problems: []), from: direction))
                }
                continue
            }
            guard let unit = nextUnit(direction) else { return false }
            made += 1
            output.append(process(unit, from: direction))
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
        for unit in units { output.append(process(unit, from: direction)) }
        if !inSync {
            // Whole frames may have been lost: messages in flight in this direction cannot be completed.
            messages.removeAll(in: direction)
        }
    }

    public mutating func finish(_ direction: Direction, into output: inout [DissectedPDU]) {
        var units: [AMQPFramedUnit] = []
        withFramer(direction) { framer in units = framer.finish() }
        for unit in units { output.append(process(unit, from: direction)) }
        let ended = messages
        messages.removeAll(in: direction)
        for (key, message) in zip(ended.codes.map(ChannelKey.init(code:)), ended.values) where key.direction == direction {
            let problem = Problem(.warning, .messageIncomplete,
                                  "the stream ended before the \(message.method.fullName) on channel \(key.channel) was complete: \(message.progress)",
                                  reference: "AMQP 0-9-1 §4.2.6")
            if output.isEmpty {
                output.append(DissectedPDU(protocolName: "amqp", summary: "incomplete message at end of stream",
                                           fields: [Field("frame_type", "Type", .string("unframed")), message.field(options: options)],
                                           problems: [problem], wireLength: 0))
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

    private mutating func process(_ unit: AMQPFramedUnit, from direction: Direction) -> DissectedPDU {
        // The frame is taken out of the unit once: each `case .frame(let framed)` copies it.
        // Not as an optional: destroying an optional frame went through the runtime's generic
        // value witnesses (about 150 instructions a frame); `isFrame` says whether there is one.
        let frame: AMQPRawFrame
        let isFrame: Bool
        let framedCleanly: Bool
        // Whether the framer lost this direction's frame sync before the frame (bytes skipped to
        // resynchronise, or lost in a gap): its problems say so, and only its.
        var lostSync = false
        if case .frame(let framed) = unit {
            frame = framed.frame
            isFrame = true
            framedCleanly = framed.problems.isEmpty
            lostSync = !framedCleanly && framed.problems.contains { $0.code == "resync-skipped" || $0.code == "capture-gap" }
        } else {
            frame = AMQPRawFrame(type: .method, channel: 0, size: 0, bytes: [], payload: [], frameEnd: nil,
                                 payloadNotHeld: 0, payloadLost: 0)
            isFrame = false
            framedCleanly = false
        }
        var channelRequests: [AMQPMethodID: AMQPArgumentValues] = [:]
        if isFrame, AMQPConnectionDissector.readsRequests(frame) {
            let peer = ChannelKey(direction: direction.reversed, channel: frame.channel)
            channelRequests = requests[peer] ?? [:]
            if let i = lastPublish.slot(peer) { channelRequests[.basicPublish] = lastPublish.values[i].values }
        }
        var decoded: AMQPFrameDecoder.Decoded
        if writesTree, framedCleanly, let fast = writtenDecode(frame) {
            decoded = fast
        } else {
            decoded = decoder.decode(unit, requests: channelRequests, strings: &shortStrings)
        }
        let first: Bool
        if direction == .toServer {
            first = !sawFirstToServer
            sawFirstToServer = true
        } else {
            first = !sawFirstToClient
            sawFirstToClient = true
        }

        if isFrame {
            if first, direction == .toServer, expectsProtocolHeader, !toServer.sawProtocolHeader {
                decoded.pdu.problems.append(Problem(.warning, .noProtocolHeader,
                                                    "the client's stream starts with a frame, not the protocol header",
                                                    reference: "AMQP 0-9-1 §4.2.2"))
            }
            checkLimits(frame, &decoded.pdu)
            if options.detail == .tree { decoded.pdu.packet = AMQPFrame(raw: frame, options: options) }
            track(frame, &decoded, from: direction, framerLostSync: lostSync)
        } else if case .protocolHeader(let bytes, _) = unit {
            let header = AMQPProtocolHeader(bytes)
            if direction == .toServer {
                clientHeader = header
            } else if !info.startedMidStream, header == nil || header != clientHeader {
                // AMQP 0-9-1 §4.2.2: a server that rejects the client's header answers with the
                // header of a version it does support, then closes the connection. AMQP 1.0
                // (§2.2) and its SASL layer (§5.3.1) have the server echo an accepted header,
                // so only a header that differs from the client's (or answers none) refuses.
                decoded.pdu.summary += " (server refuses the client's protocol version)"
                decoded.pdu.problems.append(Problem(.warning, .versionRefused,
                                                    "the server answered with its own protocol header: it does not support the version the client asked for, and closes the connection",
                                                    reference: "AMQP 0-9-1 §4.2.2"))
            }
        }
        return decoded.pdu
    }

    /// The text or JSON fast path, when the detail asks for one, writing into this connection's
    /// own buffer (a copy of the dissector makes its own before writing: copies may be used on
    /// different threads).
    private mutating func writtenDecode(_ frame: AMQPRawFrame) -> AMQPFrameDecoder.Decoded? {
        if !treeSink.isUniquelyReferenced { treeSink = ByteSink(capacity: 1024) }
        if !lineSink.isUniquelyReferenced { lineSink = ByteSink(capacity: 128) }
        switch options.detail {
        case .tree, .facts:
            return nil
        case .text(let style):
            return decoder.decodeText(frame, style: style, tree: &treeSink, line: &lineSink)
        case .json:
            return decoder.decodeJSON(frame, tree: &treeSink, line: &lineSink)
        }
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

    private func checkLimits(_ frame: AMQPRawFrame, _ pdu: inout DissectedPDU) {
        guard !withinLimits(frame) else { return }
        if let frameMax, frameMax > 0, frame.wireLength > frameMax {
            pdu.problems.append(Problem(.error, .frameMaxExceeded,
                                        "frame of \(frame.wireLength) bytes is larger than the negotiated frame-max of \(frameMax)",
                                        reference: "AMQP 0-9-1 connection.tune-ok frame-max", range: 3..<7))
        } else if frameMax == nil, expectsProtocolHeader, frame.wireLength > AMQPSpec.frameMinSize {
            pdu.problems.append(Problem(.warning, .frameMinSizeExceeded,
                                        "frame of \(frame.wireLength) bytes before frame-max was negotiated; peers need accept only \(AMQPSpec.frameMinSize)",
                                        reference: "AMQP 0-9-1 connection.tune frame-max (frame-min-size)", range: 3..<7))
        }
        if channelMax > 0, Int(frame.channel) > channelMax {
            pdu.problems.append(Problem(.error, .channelMaxExceeded,
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

    /// `framerLostSync`: the framer lost the direction's frame sync before this frame.
    private mutating func track(_ frame: AMQPRawFrame, _ decoded: inout AMQPFrameDecoder.Decoded, from direction: Direction,
                                framerLostSync: Bool) {
        let key = ChannelKey(direction: direction, channel: frame.channel)
        if framerLostSync {
            if direction == .toServer { lostSyncToServer = true } else { lostSyncToClient = true }
        }
        // AMQP 0-9-1 channel.open: a channel is used only once opened; RabbitMQ answers
        // anything else with 504 CHANNEL_ERROR. Only judged when the capture saw the whole connection.
        if expectsProtocolHeader, !lostSyncToServer, !lostSyncToClient, frame.channel != 0, frame.type != .heartbeat,
           !openChannels[frame.channel], decoded.method?.id != AMQPMethodID(classID: 20, methodID: 10) {
            decoded.pdu.problems.append(Problem(.warning, .channelNotOpen,
                                                "channel \(frame.channel) is used without a channel.open seen on this connection",
                                                reference: "AMQP 0-9-1 channel.open", range: 1..<3))
        }
        // Content seen without its start is expected right after a capture starts mid-stream or loses bytes.
        let lostSync = direction == .toServer ? lostSyncToServer : lostSyncToClient
        let severity: Problem.Severity = info.startedMidStream || lostSync ? .note : .error
        switch frame.type {
        case .method:
            guard let method = decoded.method, let spec = method.spec else { return }
            let id = AMQPMethodID(classID: spec.classID, methodID: spec.methodID)
            if let i = messages.slot(key) {
                let pending = messages.values[i]
                messages.remove(at: i)
                decoded.pdu.problems.append(Problem(.error, .messageInterrupted,
                                                    "\(spec.fullName) arrived on channel \(frame.channel) before the \(pending.method.fullName) ahead of it was complete: \(pending.progress)",
                                                    reference: "AMQP 0-9-1 §4.2.6"))
            }
            if spec.carriesContent {
                messages[key] = AMQPMessageAssembly(method: spec, values: method.values,
                                                    previewLimit: options.detail == .facts ? 0 : options.bodyPreviewBytes)
            }
            if id == .basicPublish {
                remember(.values(method.values.withoutBulk), publishedOn: key)
            } else if AMQPConnectionDissector.isRemembered(id) {
                if let i = requests.slot(key) {
                    requests.values[i][id] = method.values.withoutBulk
                } else {
                    requests[key] = [id: method.values.withoutBulk]
                }
            }
            if spec.classID == 20, spec.methodName == "close-ok" || spec.methodName == "open" {
                for d in [Direction.toServer, .toClient] {
                    requests[ChannelKey(direction: d, channel: frame.channel)] = nil
                    lastPublish[ChannelKey(direction: d, channel: frame.channel)] = nil
                }
                openChannels[frame.channel] = spec.methodName == "open"
                queues.reset(channel: frame.channel)
            }
            if let attribution = queues.track(id, method.values, channel: frame.channel, from: direction) {
                if decoded.pdu.facts != nil {
                    if let queue = attribution.queue { decoded.pdu.facts?.queue = queue }
                    if let count = attribution.ackedCount { decoded.pdu.facts?.ackedCount = count }
                } else if decoded.pdu.hasTextTree {
                    // Written as the fields' lines, through the connection's buffer (no field is made).
                    if !treeSink.isUniquelyReferenced { treeSink = ByteSink(capacity: 1024) }
                    treeSink.removeAll()
                    attribution.writeText(into: &treeSink, style: textStyle)
                    decoded.pdu.appendTextLines(treeSink.bytes)
                } else {
                    add(attribution.fields, to: &decoded.pdu)
                }
            }
            negotiate(spec, method.values, &decoded.pdu)
            trackConfirms(id, method.values, channel: frame.channel, from: direction, &decoded.pdu)
        case .header:
            guard let header = decoded.header else { return }
            guard let i = messages.slot(key), messages.values[i].stage == .awaitingHeader else {
                let what = messages[key].map { "while the \($0.method.fullName) before it still expects body frames" }
                    ?? "with no content-bearing method (basic.publish, basic.deliver, basic.get-ok, basic.return) before it"
                messages[key] = nil
                decoded.pdu.problems.append(Problem(severity, .unexpectedHeader, "content header on channel \(frame.channel) \(what)",
                                                    reference: "AMQP 0-9-1 §4.2.6"))
                return
            }
            if !messages.values[i].isOfMethodClass(header), let classID = header.classID {
                let method = messages.values[i].method
                decoded.pdu.problems.append(Problem(.error, .headerClassMismatch,
                                                    "content header of class \(classID) follows \(method.fullName) of class \(method.classID)",
                                                    reference: "AMQP 0-9-1 §4.2.6.1", range: 7..<9))
            }
            // Changed where it is kept: a copy out and back retained each of its parts.
            messages.values[i].take(header: header,
                                    properties: keepsHeaders ? AMQPMessageAssembly.keptProperties(of: decoded.pdu) : nil)
            if messages.values[i].isComplete {
                // Moved out of the table: handing the table's own value to a mutating method
                // copied every part of it, and the copy and the original were destroyed apart.
                complete(messages.take(at: i), in: &decoded.pdu)
            }
        case .body:
            guard let i = messages.slot(key), messages.values[i].stage == .awaitingBody else {
                let what = messages[key] != nil ? "before the content header" : "with no message in progress"
                messages[key] = nil
                decoded.pdu.problems.append(Problem(severity, .unexpectedBody, "body frame on channel \(frame.channel) \(what)",
                                                    reference: "AMQP 0-9-1 §4.2.6.2"))
                return
            }
            messages.values[i].add(body: frame)
            let (received, bodySize) = (messages.values[i].received, messages.values[i].bodySize)
            if received > bodySize {
                decoded.pdu.problems.append(Problem(.error, .bodyOverrun,
                                                    "body frames carry \(received) bytes, more than the body-size of \(bodySize) in the content header",
                                                    reference: "AMQP 0-9-1 §4.2.6.2"))
            }
            if messages.values[i].isComplete {
                // Moved out of the table: handing the table's own value to a mutating method
                // copied every part of it, and the copy and the original were destroyed apart.
                complete(messages.take(at: i), in: &decoded.pdu)
            }
        default:
            return
        }
    }

    /// Adds fields after a PDU's tree: written as lines (through this connection's buffer) when
    /// the tree was written as text.
    private mutating func add(_ fields: [Field], to pdu: inout DissectedPDU) {
        if !treeSink.isUniquelyReferenced { treeSink = ByteSink(capacity: 1024) }
        pdu.appendFields(fields, style: textStyle, scratch: &treeSink)
    }

    /// Attaches a completed message to the PDU that completed it: its field, or its facts.
    private mutating func complete(_ message: AMQPMessageAssembly, in pdu: inout DissectedPDU) {
        if pdu.facts != nil {
            pdu.facts?.message = message.facts
        } else if pdu.hasTextTree {
            // Written as the field's lines, through the connection's buffer (no field is made).
            if !treeSink.isUniquelyReferenced { treeSink = ByteSink(capacity: 1024) }
            treeSink.removeAll()
            message.writeText(into: &treeSink, style: textStyle)
            pdu.appendTextLines(treeSink.bytes)
        } else if pdu.hasJSONTree {
            add([message.field(options: options)], to: &pdu)
        } else {
            pdu.fields.append(message.field(options: options))
        }
    }

    /// RabbitMQ's publisher confirms: after confirm.select, the client's publishes on the channel
    /// are numbered from 1, and the broker's basic.ack / basic.nack delivery tags refer to them.
    private mutating func trackConfirms(_ id: AMQPMethodID, _ values: AMQPArgumentValues, channel: UInt16,
                                        from direction: Direction, _ pdu: inout DissectedPDU) {
        switch (id.classID, id.methodID) {
        case (85, 10) where direction == .toServer:
            confirmSequence[ChannelKey(direction: .toServer, channel: channel)] = 0
        case (20, 10), (20, 41):
            confirmSequence[ChannelKey(direction: .toServer, channel: channel)] = nil
        case (60, 40) where direction == .toServer:
            guard let number = numberPublish(on: ChannelKey(direction: .toServer, channel: channel)) else { return }
            // Fields of the tree only: summaries do not count them.
            guard pdu.facts == nil else { return }
            add([Field("publish_seq", "Publish sequence number (confirm mode)", .int(number))], to: &pdu)
        case (60, 80) where direction == .toClient, (60, 120) where direction == .toClient:
            guard confirmSequence.slot(ChannelKey(direction: .toServer, channel: channel)) != nil, let tag = values.int("delivery-tag") else { return }
            let multiple = values.bool("multiple") ?? false
            guard pdu.facts == nil else { return }
            // Written as bytes, made a String once (one per confirm: interpolating cost several times as much).
            var text = ByteSink(capacity: 80)
            if id.methodID == 80 { text.literal("confirms ") } else { text.literal("rejects (the broker could not take responsibility for) ") }
            if multiple { text.literal("publishes up to #") } else { text.literal("publish #") }
            text.append(tag)
            add([Field("confirms", "Confirms", .string(text.take()))], to: &pdu)
        default:
            return
        }
    }

    /// A basic.publish on `key`'s channel and direction: the channel's last publish, which a
    /// basic.return and a close explanation look back to. The full path and the counted path
    /// (`countedFrame`) both keep it here.
    private mutating func remember(_ publish: LastPublish, publishedOn key: ChannelKey) {
        lastPublish[key] = publish
    }

    /// The number of a client's basic.publish on `key`'s channel in confirm mode (RabbitMQ's
    /// publisher confirms: from 1 after confirm.select), counted; nil when the channel is not in
    /// confirm mode or the publish is the broker's. The full path and the counted path both count
    /// it here.
    private mutating func numberPublish(on key: ChannelKey) -> Int? {
        guard key.direction == .toServer, let i = confirmSequence.slot(key) else { return nil }
        confirmSequence.values[i] += 1
        return confirmSequence.values[i]
    }

    /// connection.tune proposes limits, connection.tune-ok settles them for both directions.
    private mutating func negotiate(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues, _ pdu: inout DissectedPDU) {
        guard spec.classID == 10 else { return }
        switch spec.methodName {
        case "tune":
            proposedFrameMax = values.int("frame-max")
        case "tune-ok":
            guard let agreed = values.int("frame-max") else { return }
            if let proposed = proposedFrameMax, proposed > 0, agreed == 0 || agreed > proposed {
                pdu.problems.append(Problem(.error, .frameMaxAboveProposal,
                                            "tune-ok asks for frame-max \(agreed == 0 ? "unlimited" : String(agreed)), above the server's \(proposed)",
                                            reference: "AMQP 0-9-1 connection.tune-ok frame-max"))
            }
            if agreed > 0, agreed < AMQPSpec.frameMinSize {
                pdu.problems.append(Problem(.error, .frameMaxTooSmall,
                                            "frame-max \(agreed) is below frame-min-size (\(AMQPSpec.frameMinSize))",
                                            reference: "AMQP 0-9-1 connection.tune-ok frame-max"))
            }
            frameMax = agreed
            let agreedChannels = values.int("channel-max") ?? 0
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

// MARK: - The counted path

extension AMQPConnectionDissector {
    /// The counted path of `PDUDetail.facts` (a table): a whole, cleanly framed frame of a
    /// connection in its steady state — a heartbeat, a frequent method with no message in
    /// progress on its channel, the content header or a body frame of the message in progress —
    /// put into `output` as a `CountedPDU` (with the message it completes, if it does), the
    /// connection state changed as `process` changes it.
    /// Returns false, having changed nothing, for any frame in which `process` could find a
    /// problem (a limit exceeded, a channel not open, a message interrupted or overrun, a first
    /// frame, anything the facts decoder does not vouch for): `process` takes that one.
    ///
    /// What it leaves out of `process` is what a counted PDU does not need: the `DissectedPDU`
    /// and `PDUFacts` boxes of each frame, the decoded result that carries them, and the checks
    /// that cannot fire here.
    fileprivate mutating func countedFrame<Output: PDUOutput>(_ frame: AMQPRawFrame, from direction: Direction,
                                                              into output: inout Output) -> Bool {
        guard frame.isWhole, frame.frameEnd == AMQPSpec.frameEnd, withinLimits(frame),
              direction == .toServer ? sawFirstToServer : sawFirstToClient else { return false }
        if frame.type == .heartbeat {
            // AMQP 0-9-1 §4.2.7: channel 0, no payload.
            guard frame.channel == 0, frame.size == 0 else { return false }
            output.append(counted: Self.countedPDU("heartbeat", frame), orBox: { $0.dissected(protocolName: "amqp") })
            return true
        }
        // AMQP 0-9-1 §4.2.3: methods of the frequent kinds, headers and bodies are never on
        // channel 0; a channel used before its channel.open is a problem (`track`).
        guard frame.channel != 0,
              openChannels[frame.channel] || !expectsProtocolHeader || lostSyncToServer || lostSyncToClient else { return false }
        let key = ChannelKey(direction: direction, channel: frame.channel)
        switch frame.type {
        case .method:
            // A method while a message is in progress on the channel interrupts it (a problem).
            guard messages.slot(key) == nil else { return false }
            // An acknowledgement: its delivery tag settles deliveries (`track`, through the queue
            // tracker); nothing else of it is kept.
            if let settled = AMQPFrameDecoder.settlement(frame.payload), let spec = settled.id.spec {
                var pdu = Self.countedPDU(spec.fullName, frame)
                Self.attribute(queues.settle(settled.id, deliveryTag: settled.deliveryTag, multiple: settled.multiple,
                                             channel: frame.channel, from: direction), to: &pdu)
                output.append(counted: consume pdu, orBox: { $0.dissected(protocolName: "amqp") })
                return true
            }
            // A publish or a delivery: its arguments typed, kept with the message (and a publish
            // as the channel's last), not as a list of values.
            if let arguments = AMQPFrameDecoder.frequentArguments(frame.payload, strings: &shortStrings), let spec = arguments.id.spec {
                var pdu = Self.countedPDU(spec.fullName, frame)
                messages.add(key, AMQPMessageAssembly(method: spec, arguments: arguments, previewLimit: 0))
                switch arguments {
                case .publish:
                    remember(.read(arguments), publishedOn: key)
                    _ = numberPublish(on: key)
                case .deliver(let consumerTag, let deliveryTag, _, _, _):
                    if let queue = queues.deliver(consumerTag: consumerTag, deliveryTag: deliveryTag, channel: frame.channel, from: direction) {
                        pdu.queue = queue
                    }
                }
                output.append(counted: consume pdu, orBox: { $0.dissected(protocolName: "amqp") })
                return true
            }
            // The other frequent methods (basic.get-ok), with their values. What `track` does for
            // them: none is of class 10 or 20, none a remembered request (checked: basic.publish,
            // which is, came above), and confirms add to the tree only.
            guard let method = decoder.frequentMethod(frame.payload, strings: &shortStrings), let spec = method.spec else { return false }
            let id = AMQPMethodID(classID: spec.classID, methodID: spec.methodID)
            guard !AMQPConnectionDissector.isRemembered(id) else { return false }
            var pdu = Self.countedPDU(spec.fullName, frame)
            if spec.carriesContent {
                messages[key] = AMQPMessageAssembly(method: spec, values: method.values, previewLimit: 0)
            }
            Self.attribute(queues.track(id, method.values, channel: frame.channel, from: direction), to: &pdu)
            output.append(counted: consume pdu, orBox: { $0.dissected(protocolName: "amqp") })
            return true
        case .header:
            // A header of another class than its method's is a problem (`track`).
            guard let header = decoder.headerFacts(frame.payload), let i = messages.slot(key),
                  messages.withValue(at: i, { message in
                      guard message.stage == .awaitingHeader, message.isOfMethodClass(header) else { return false }
                      message.take(header: header)
                      return true
                  }) else { return false }
            append("header", frame, completing: i, into: &output)
            return true
        case .body:
            // Body bytes past the header's body size are a problem (`track`).
            guard let i = messages.slot(key), messages.withValue(at: i, { message in
                guard message.stage == .awaitingBody, message.received &+ UInt64(frame.size) <= message.bodySize else { return false }
                message.add(body: frame)
                return true
            }) else { return false }
            append("body", frame, completing: i, into: &output)
            return true
        default:
            return false
        }
    }

    /// The queue and the deliveries covered that the queue tracker attributed a frame to, as
    /// `track` puts them into a box's facts.
    private static func attribute(_ attribution: AMQPQueueTracker.Attribution?, to pdu: inout CountedPDU) {
        guard let attribution else { return }
        if let queue = attribution.queue { pdu.queue = queue }
        if let count = attribution.ackedCount { pdu.ackedCount = count }
    }

    /// A counted PDU of kind `kind` for the frame, with its channel.
    private static func countedPDU(_ kind: String, _ frame: AMQPRawFrame) -> CountedPDU {
        var pdu = CountedPDU(kind: kind, wireLength: frame.wireLength)
        pdu.channel = Int(frame.channel)
        return pdu
    }

    /// Puts the frame's counted PDU of kind `kind` into `output`; when the message at `slot` of
    /// `messages` is now complete, with the message's facts (the message taken out of
    /// `messages`, as `track` does). Made here and moved into `output`: a counted PDU passed
    /// and copied costs about a hundred instructions a copy.
    private mutating func append<Output: PDUOutput>(_ kind: String, _ frame: AMQPRawFrame, completing slot: Int, into output: inout Output) {
        var pdu = Self.countedPDU(kind, frame)
        if messages.withValue(at: slot, { $0.isComplete }) { pdu.message = messages.take(at: slot).facts }
        output.append(counted: consume pdu, orBox: { $0.dissected(protocolName: "amqp") })
    }
}

