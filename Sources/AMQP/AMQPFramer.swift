import Dissection

/// Finds frame boundaries in one direction of an AMQP connection, and nothing more.
///
/// Feed bytes with `append`, then call `next()` until it says `.needMore`. At the start of a
/// stream a protocol header may come first (AMQP 0-9-1 §4.2.2). Each frame is handed over as
/// its own bytes for the decoder (two-stage decoding). A frame larger than
/// `maxHeldFrameBytes` is held only up to that limit; the rest is counted as it passes.
/// When the stream is out of step (a capture that starts mid-stream, a bad frame-end, a gap
/// with no known frame around it) the framer hunts for a plausible frame boundary and reports
/// the bytes it skipped on the next unit.
public struct AMQPFramer {
    /// The result of one `next()` call.
    public enum Step: Sendable {
        /// Nothing more can be framed until more bytes arrive.
        case needMore
        case unit(AMQPFramedUnit)
    }

    private enum State {
        /// A protocol header may come.
        case streamStart
        /// The window starts at a frame boundary.
        case inSync
        /// Looking for a plausible frame boundary.
        case hunting
        /// Inside a frame not held whole (over the limit, or cut by a gap).
        case streaming(PartialFrame)
        /// The stream carries another protocol (AMQP 1.0): bytes are counted, not framed.
        case undissected(String)
    }

    private struct PartialFrame {
        var type: AMQPFrameType
        var channel: UInt16
        var size: UInt32
        var held: [UInt8]
        var heldLimit: Int
        /// Payload and frame-end bytes still to pass.
        var remaining: Int
        var holed = false
        var notHeld = 0
        var lost = 0
        var frameEnd: UInt8?
    }

    /// Frame-max negotiated for the connection (connection.tune-ok), 0 while unknown; bounds the
    /// size of a frame accepted while resynchronising.
    public var frameMax = 0
    /// Channel-max negotiated for the connection, 0 while unknown.
    public var channelMax = 0
    /// Whether the framer knows where frames start (false while hunting or undissected).
    public var isInSync: Bool {
        switch state {
        case .streamStart, .inSync, .streaming: return true
        case .hunting, .undissected: return false
        }
    }
    /// Whether a protocol header has been seen.
    public private(set) var sawProtocolHeader = false

    private let options: AMQPOptions
    private var state: State
    private var window: ArraySlice<UInt8> = []
    private var pending: [Problem] = []
    private var skipped = 0
    private var undissectedBytes = 0
    /// Set while no more bytes will come before a gap or the end: a candidate frame that
    /// needs bytes beyond those held cannot be confirmed, so hunting looks past it.
    private var finalHunt = false

    /// `atStreamStart`: the first bytes are the stream's first (a protocol header may come);
    /// otherwise the framer starts by hunting for a frame boundary.
    public init(options: AMQPOptions = AMQPOptions(), atStreamStart: Bool) {
        self.options = options
        self.state = atStreamStart ? .streamStart : .hunting
    }

    /// Adds the next bytes of the direction. Copies only what is left unframed from before.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        if window.isEmpty {
            window = bytes
        } else {
            window.append(contentsOf: bytes)
        }
    }

    /// The next unit, or `.needMore`.
    public mutating func next() -> Step {
        while true {
            switch state {
            case .undissected:
                undissectedBytes += window.count
                window = []
                return .needMore
            case .streamStart:
                guard let first = window.first else { return .needMore }
                // "A" cannot start a frame (no frame type 0x41), so one byte decides.
                guard first == 0x41 else {
                    state = .inSync
                    continue
                }
                let magic: [UInt8] = [0x41, 0x4D, 0x51, 0x50]
                let known = min(window.count, 4)
                guard window.prefix(known).elementsEqual(magic.prefix(known)) else {
                    pending.append(Problem(.error, .badProtocolHeader,
                                           "the stream starts with \"A\" but not with the AMQP protocol header",
                                           reference: "AMQP 0-9-1 §4.2.2"))
                    state = .hunting
                    continue
                }
                guard window.count >= 8 else { return .needMore }
                let bytes = window.prefix(8)
                consume(8)
                sawProtocolHeader = true
                if let header = AMQPProtocolHeader(bytes), header.family == .amqp10 {
                    state = .undissected(header.versionName)
                } else {
                    state = .inSync
                }
                return .unit(.protocolHeader(bytes, problems: takePending()))
            case .inSync:
                guard let first = window.first else { return .needMore }
                let type = AMQPFrameType(rawValue: first)
                guard type.isKnown else {
                    // AMQP 0-9-1 §4.2.3: an unknown frame type is a frame error; the bytes
                    // cannot be trusted to hold a size either.
                    pending.append(Problem(.error, .unknownFrameType,
                                           "frame type \(type) is not a 0-9-1 frame type; frame sync lost, resynchronising",
                                           reference: "AMQP 0-9-1 §4.2.3"))
                    state = .hunting
                    continue
                }
                guard window.count >= 7, let size = readUInt32(at: 3) else { return .needMore }
                let channel = readUInt16(at: 1) ?? 0
                let total = 8 + Int(size)
                if total > options.effectiveMaxHeld {
                    let held = Array(window.prefix(7))
                    consume(7)
                    state = .streaming(PartialFrame(type: type, channel: channel, size: size, held: held,
                                                    heldLimit: options.effectiveMaxHeld, remaining: Int(size) + 1))
                    continue
                }
                guard window.count >= total else { return .needMore }
                let bytes = window.prefix(total)
                consume(total)
                let s = bytes.startIndex
                let end = bytes[s + total - 1]
                let problems = takePending()
                // AMQP 0-9-1 §4.2.3: a wrong frame-end means the size cannot be trusted; the
                // decoder reports it, the framer looks for the next plausible boundary.
                if end != AMQPSpec.frameEnd { state = .hunting }
                let frame = AMQPRawFrame(type: type, channel: channel, size: size, bytes: bytes,
                                         payload: bytes[(s + 7)..<(s + total - 1)], frameEnd: end,
                                         payloadNotHeld: 0, payloadLost: 0)
                return .unit(.frame(frame, problems: problems))
            case .streaming(var partial):
                guard !window.isEmpty else { return .needMore }
                let take = min(partial.remaining, window.count)
                feed(&partial, window.prefix(take))
                consume(take)
                if partial.remaining > 0 {
                    state = .streaming(partial)
                    return .needMore
                }
                return .unit(emit(partial))
            case .hunting:
                switch hunt() {
                case .needMore:
                    return .needMore
                case .found:
                    if skipped > 0 {
                        pending.append(Problem(.warning, .resyncSkipped,
                                               "skipped \(skipped) bytes to find the next frame boundary",
                                               reference: "AMQP 0-9-1 §4.2.3"))
                        skipped = 0
                    }
                    state = .inSync
                }
            }
        }
    }

    /// The next unit when it is a whole frame, in sync, well ended and with no problem around it
    /// (what `next` would return as `.unit(.frame(frame, problems: []))`), taken; false, with
    /// nothing taken, for anything else (`next` then says what there is). A connection in its
    /// steady state frames every frame here, without an enum wrapped around it twice.
    ///
    /// Written into `frame` (returning true), not returned as an optional: an optional frame was
    /// destroyed through the runtime's generic witnesses once per frame.
    public mutating func nextCleanFrame(into frame: inout AMQPRawFrame) -> Bool {
        guard case .inSync = state, pending.isEmpty else { return false }
        // The header and the frame-end read over the window's memory (no slice, no index checks
        // per byte); a frame needs at least 8 bytes.
        let maxHeld = options.effectiveMaxHeld
        let header = window.withUnsafeBufferPointer { p -> (type: UInt8, channel: UInt16, size: UInt32)? in
            guard p.count >= 8 else { return nil }
            let size = UInt32(p[3]) << 24 | UInt32(p[4]) << 16 | UInt32(p[5]) << 8 | UInt32(p[6])
            let total = 8 + Int(size)
            guard total <= maxHeld, p.count >= total, p[total - 1] == AMQPSpec.frameEnd else { return nil }
            return (p[0], UInt16(p[1]) << 8 | UInt16(p[2]), size)
        }
        guard let header else { return false }
        let type = AMQPFrameType(rawValue: header.type)
        guard type.isKnown else { return false }
        let (channel, size) = (header.channel, header.size)
        let s = window.startIndex
        let total = 8 + Int(size)
        let bytes = window[s..<(s + total)]
        window = total == window.count ? [] : window[(s + total)...]
        frame = AMQPRawFrame(type: type, channel: channel, size: size, bytes: bytes,
                             payload: bytes[(s + 7)..<(s + total - 1)], frameEnd: AMQPSpec.frameEnd,
                             payloadNotHeld: 0, payloadLost: 0)
        return true
    }

    /// `count` bytes of the direction were lost. A frame the gap ends inside of stays in sync
    /// (it is handed over truncated when its last byte passes); otherwise the framer hunts.
    /// Returns the units completed before or by the gap.
    public mutating func gap(_ count: Int) -> [AMQPFramedUnit] {
        var out = drainBeforeBreak()
        guard count > 0 else { return out }
        // Made where it is kept: most gaps fall inside a frame, whose own problem says so. Written
        // as bytes (an interpolation cost several times as much, once per gap while hunting).
        func lostNote() -> Problem {
            var text = ByteSink(capacity: 64)
            text.literal("the capture lost ")
            text.append(count)
            text.literal(" bytes of this direction here")
            return Problem(.warning, .captureGap, text.take())
        }
        switch state {
        case .undissected:
            undissectedBytes += count
            return out
        case .streamStart, .hunting:
            skipped += window.count
            window = []
            pending.append(lostNote())
            state = .hunting
        case .inSync:
            if window.count >= 7, let size = readUInt32(at: 3), AMQPFrameType(rawValue: window[window.startIndex]).isKnown {
                let partial = PartialFrame(type: AMQPFrameType(rawValue: window[window.startIndex]),
                                           channel: readUInt16(at: 1) ?? 0, size: size,
                                           held: Array(window), heldLimit: options.effectiveMaxHeld,
                                           remaining: Int(size) + 8 - window.count)
                window = []
                if let unit = applyGap(count, to: partial) { out.append(unit) }
            } else {
                skipped += window.count
                window = []
                pending.append(lostNote())
                state = .hunting
            }
        case .streaming(let partial):
            if let unit = applyGap(count, to: partial) { out.append(unit) }
        }
        return out
    }

    /// The direction ended: units still complete are returned, then a frame left incomplete
    /// (truncated) or the bytes that could not be framed.
    public mutating func finish() -> [AMQPFramedUnit] {
        var out = drainBeforeBreak()
        let ended = Problem(.warning, .truncated, "the stream ended inside this frame", reference: "AMQP 0-9-1 §4.2.3")
        switch state {
        case .undissected(let version):
            if undissectedBytes > 0 {
                out.append(.unframed(count: undissectedBytes, problems: takePending() + [
                    Problem(.note, .notDissected, "\(undissectedBytes) bytes of \(version) traffic, not dissected")]))
                undissectedBytes = 0
            }
        case .streaming(var partial):
            partial.lost += max(partial.remaining - 1, 0)
            partial.remaining = 0
            var unit = emit(partial)
            if case .frame(var framed) = unit {
                framed.problems.append(ended)
                unit = .frame(framed)
            }
            out.append(unit)
        case .inSync where window.count >= 7:
            if let size = readUInt32(at: 3) {
                var partial = PartialFrame(type: AMQPFrameType(rawValue: window[window.startIndex]),
                                           channel: readUInt16(at: 1) ?? 0, size: size,
                                           held: Array(window), heldLimit: options.effectiveMaxHeld,
                                           remaining: 0)
                partial.lost = Int(size) + 8 - window.count - 1
                window = []
                var unit = emit(partial)
                if case .frame(var framed) = unit {
                    framed.problems.append(ended)
                    unit = .frame(framed)
                }
                out.append(unit)
            }
        case .inSync, .streamStart, .hunting:
            let count = skipped + window.count
            window = []
            skipped = 0
            if count > 0 {
                out.append(.unframed(count: count, problems: takePending() + [
                    Problem(.warning, .unframedBytes, "\(count) bytes at the end of the stream do not form a frame",
                            reference: "AMQP 0-9-1 §4.2.3")]))
            }
        }
        // A gap with nothing after it is the reassembler's to report; anything else needs a unit.
        let leftover = takePending()
        if leftover.contains(where: { $0.code != "capture-gap" }) {
            out.append(.unframed(count: 0, problems: leftover))
        }
        state = .hunting
        return out
    }

    // MARK: - Internals

    /// The units still to be had from the bytes held, before a gap or the end of the stream.
    private mutating func drainBeforeBreak() -> [AMQPFramedUnit] {
        var out: [AMQPFramedUnit] = []
        while case .unit(let unit) = next() { out.append(unit) }
        if case .hunting = state, !window.isEmpty {
            finalHunt = true
            while case .unit(let unit) = next() { out.append(unit) }
            finalHunt = false
        }
        return out
    }

    private mutating func consume(_ n: Int) {
        window = window.dropFirst(n)
        if window.isEmpty { window = [] }
    }

    private mutating func takePending() -> [Problem] {
        defer { pending = [] }
        return pending
    }

    private func readUInt16(at i: Int) -> UInt16? {
        guard i >= 0, i + 2 <= window.count else { return nil }
        let s = window.startIndex + i
        return UInt16(window[s]) << 8 | UInt16(window[s + 1])
    }

    private func readUInt32(at i: Int) -> UInt32? {
        guard i >= 0, i + 4 <= window.count else { return nil }
        let s = window.startIndex + i
        return UInt32(window[s]) << 24 | UInt32(window[s + 1]) << 16 | UInt32(window[s + 2]) << 8 | UInt32(window[s + 3])
    }

    private func feed(_ partial: inout PartialFrame, _ chunk: ArraySlice<UInt8>) {
        let payloadPart = min(chunk.count, max(partial.remaining - 1, 0))
        let payload = chunk.prefix(payloadPart)
        if partial.holed {
            partial.notHeld += payload.count
        } else {
            let room = max(partial.heldLimit - partial.held.count, 0)
            partial.held.append(contentsOf: payload.prefix(room))
            partial.notHeld += max(payload.count - room, 0)
        }
        partial.remaining -= payloadPart
        if chunk.count > payloadPart, partial.remaining == 1 {
            partial.frameEnd = chunk[chunk.startIndex + payloadPart]
            partial.remaining = 0
        }
    }

    private mutating func applyGap(_ count: Int, to partial: PartialFrame) -> AMQPFramedUnit? {
        var partial = partial
        let payloadLeft = max(partial.remaining - 1, 0)
        if count < partial.remaining {
            partial.lost += count
            partial.holed = true
            partial.remaining -= count
            state = .streaming(partial)
            return nil
        }
        partial.lost += payloadLeft
        partial.remaining = 0
        var problems = [Problem(.warning, .captureGap,
                                "the capture lost \(partial.lost) payload bytes of this frame and its frame-end")]
        let beyond = count - payloadLeft - 1
        state = beyond > 0 ? .hunting : .inSync
        let unit = emitUnit(partial, extra: &problems)
        if beyond > 0 {
            pending.append(Problem(.warning, .captureGap,
                                   "the capture lost \(beyond) bytes after the previous frame; resynchronised here"))
        }
        return unit
    }

    private mutating func emit(_ partial: PartialFrame) -> AMQPFramedUnit {
        var extra: [Problem] = []
        if partial.holed, partial.lost > 0 {
            extra.append(Problem(.warning, .captureGap, "the capture lost \(partial.lost) payload bytes of this frame"))
        }
        return emitUnit(partial, extra: &extra)
    }

    private mutating func emitUnit(_ partial: PartialFrame, extra: inout [Problem]) -> AMQPFramedUnit {
        let size = Int(partial.size)
        // The header's 7 bytes are followed by at most `size` payload bytes.
        var bytes = Array(partial.held.prefix(7 + size))
        let payloadHeld = bytes.count - 7
        var problems = takePending() + extra
        if let end = partial.frameEnd {
            if payloadHeld == size { bytes.append(end) }
            if end != AMQPSpec.frameEnd {
                state = .hunting
            } else if case .streaming = state {
                state = .inSync
            }
        } else if case .streaming = state {
            state = .inSync
        }
        if partial.notHeld > 0 && !partial.holed {
            problems.append(Problem(.note, .frameNotHeld,
                                    "frame of \(8 + size) bytes is larger than the \(options.effectiveMaxHeld)-byte hold limit; \(partial.notHeld) payload bytes were skipped, not decoded"))
        }
        let slice = bytes[...]
        let payloadEnd = 7 + payloadHeld
        let frame = AMQPRawFrame(type: partial.type, channel: partial.channel, size: partial.size, bytes: slice,
                                 payload: slice[7..<payloadEnd], frameEnd: partial.frameEnd,
                                 payloadNotHeld: partial.notHeld, payloadLost: partial.lost)
        return .frame(frame, problems: problems)
    }

    private enum HuntResult { case needMore, found }

    private mutating func hunt() -> HuntResult {
        var p = 0
        let count = window.count
        while p < count {
            // Most bytes of what is not AMQP are no frame type: they are passed over here, in
            // one loop over the bytes, before a frame is weighed where one may start.
            p = window.withUnsafeBufferPointer { bytes in
                var q = p
                while q < count, !Self.isFrameType(bytes[q]) { q += 1 }
                return q
            }
            guard p < count else { break }
            switch plausibility(at: p) {
            case .no:
                p += 1
            case .needMore:
                skipped += p
                consume(p)
                return .needMore
            case .yes:
                skipped += p
                consume(p)
                return .found
            }
        }
        skipped += count
        window = []
        return .needMore
    }

    private enum Plausibility { case no, needMore, yes }

    /// A method, content header, content body or heartbeat frame's type (AMQP 0-9-1 §4.2.3).
    @inline(__always)
    private static func isFrameType(_ byte: UInt8) -> Bool {
        byte == 1 || byte == 2 || byte == 3 || byte == 8
    }

    /// Largest payload a frame found while resynchronising may have: the negotiated frame-max,
    /// else RabbitMQ's default of 131072, and never more than the hold limit.
    private var huntSizeLimit: Int {
        let frameLimit = frameMax > 0 ? frameMax : 131_072
        return max(min(frameLimit, options.effectiveMaxHeld) - 8, 0)
    }

    /// Whether a frame plausibly starts `p` bytes into the window: a known type, a channel and
    /// size within limits, the frame-end where the size says, a known method or content class,
    /// and a plausible start of the frame after it when those bytes are here.
    private func plausibility(at p: Int) -> Plausibility {
        let s = window.startIndex + p
        let available = window.count - p
        let type = window[s]
        guard Self.isFrameType(type) else { return .no }
        let needMore: Plausibility = finalHunt ? .no : .needMore
        guard available >= 7, let channel = readUInt16(at: p + 1), let size32 = readUInt32(at: p + 3) else {
            return needMore
        }
        let size = Int(size32)
        guard size <= huntSizeLimit else { return .no }
        if channelMax > 0, Int(channel) > channelMax { return .no }
        switch type {
        case 8: guard channel == 0, size == 0 else { return .no }
        case 1: guard size >= 4 else { return .no }
        case 2: guard size >= 14, channel != 0 else { return .no }
        default: guard size >= 1, channel != 0 else { return .no }
        }
        guard available >= size + 8 else { return needMore }
        guard window[s + 7 + size] == AMQPSpec.frameEnd else { return .no }
        if type == 1 {
            guard let classID = readUInt16(at: p + 7), let methodID = readUInt16(at: p + 9),
                  AMQPSpec.method(classID: classID, methodID: methodID) != nil,
                  (channel == 0) == (classID == 10) else { return .no }
        }
        if type == 2 {
            guard let classID = readUInt16(at: p + 7), let weight = readUInt16(at: p + 9), weight == 0,
                  let properties = AMQPSpec.properties(classID: classID), !properties.isEmpty else { return .no }
        }
        let nextStart = p + size + 8
        if nextStart < window.count {
            let nextType = window[window.startIndex + nextStart]
            guard Self.isFrameType(nextType) else { return .no }
            if let nextSize = readUInt32(at: nextStart + 3), Int(nextSize) > huntSizeLimit { return .no }
        }
        return .yes
    }
}
