/// Finds MQTT PDU boundaries in one direction of a connection (the first stage of decoding;
/// `MQTTDecoder` is the second).
///
/// Feed it with `append`, `gap` and `finish` in stream order, then call `next()` until it
/// says `.needMore`. It copies at most `maxHeldPDUBytes` of each PDU; the rest of a larger
/// PDU is only counted. Nothing is allocated from a length read off the wire.
///
/// When it does not know where a packet starts (a capture that began mid-stream, bytes lost
/// between packets, a malformed remaining length) it resynchronises: it takes the first
/// offset where a plausible fixed header (a defined type with its required flags, a minimal
/// remaining length of at most 4 bytes, a length the type allows) describes a packet that is
/// followed by another plausible header, or that ends exactly where the data ends at a gap or
/// at `finish`, or exactly where a segment ended (see `append(_:endsSegment:)`). Decisions
/// wait for enough bytes, so any split of the same bytes gives the same result. Segment ends
/// are evidence, so bytes appended with `endsSegment: true` may resynchronise differently
/// when their segments end elsewhere; the result still never depends on when `next()` is
/// called.
public struct MQTTFramer {
    /// What `next()` found.
    public enum Step: Equatable, Sendable {
        /// A PDU, complete or truncated.
        case frame(MQTTFrame)
        /// Everything fed so far is consumed or waiting for more bytes.
        case needMore
        /// Bytes that are not part of any PDU the framer could find.
        case skipped(Int, SkipReason)
        /// A fixed header whose remaining length has a fifth byte (MQTT 5.0 §1.5.5, a Malformed
        /// Packet): its bytes; the framer resynchronises after it.
        case malformedHeader([UInt8])
    }

    public enum SkipReason: Equatable, Sendable {
        /// Bytes passed over while looking for a packet boundary.
        case resynchronising
        /// A gap in the capture between packets (the count is the gap's); the framer resynchronises.
        case lostInGap
        /// The stream finished inside a fixed header or before a boundary was found.
        case incompleteAtEnd
    }

    private enum Input {
        case bytes(ArraySlice<UInt8>, endsSegment: Bool)
        case gap(Int)
        case end
    }

    private enum Mode {
        case header
        case body
        case hunting
    }

    private struct Partial {
        var held: [UInt8] = []
        var wireLength = 0
        /// Bytes of the PDU accounted for: held, unheld or missing.
        var seen = 0
        var missing = 0
        var unheld = 0
        var contiguous = true
    }

    /// At most this many bytes of one PDU are held (at least 16, so a fixed header always fits).
    public let maxHeldPDUBytes: Int
    /// A resynchronisation candidate must end, and the next header begin, within this many bytes.
    public let resyncWindowBytes: Int

    private var queue: [Input] = []
    private var queueHead = 0
    /// Bytes already taken from the front input when it is bytes: the front advances here, not by
    /// writing a shorter slice into the queue (an array write per PDU, with a release and a retain).
    private var frontTaken = 0
    private var mode: Mode
    private var header: [UInt8] = []
    private var partial = Partial()
    private var huntBuffer: [UInt8] = []
    private var huntScan = 0
    /// Offsets in `huntBuffer` where a segment ended, ascending.
    private var huntSegmentEnds: [Int] = []
    /// Bytes dropped from the hunt buffer's front, not yet reported.
    private var huntDiscarded = 0

    /// - Parameter startsMidStream: the first byte may be inside a packet; resynchronise first.
    public init(maxHeldPDUBytes: Int = 1 << 20, resyncWindowBytes: Int = 1 << 16, startsMidStream: Bool = false) {
        self.maxHeldPDUBytes = max(16, maxHeldPDUBytes)
        self.resyncWindowBytes = max(16, resyncWindowBytes)
        self.mode = startsMidStream ? .hunting : .header
    }

    public init(options: MQTTOptions, startsMidStream: Bool) {
        self.init(maxHeldPDUBytes: options.maxHeldPDUBytes, resyncWindowBytes: options.resyncWindowBytes,
                  startsMidStream: startsMidStream)
    }

    /// The next bytes of the stream.
    ///
    /// - Parameter endsSegment: the bytes end a unit the sender's data arrived in (a TCP
    ///   segment of a capture). While resynchronising, a candidate packet that ends exactly at
    ///   such an end is accepted without waiting for the next packet's header: senders write
    ///   whole packets, so a segment end is strong evidence of a packet end, and waiting would
    ///   attribute the packet to a later segment (possibly much later, when the peer is quiet).
    ///   Leave it false for bytes whose splits mean nothing.
    public mutating func append(_ bytes: ArraySlice<UInt8>, endsSegment: Bool = false) {
        if !bytes.isEmpty { queue.append(.bytes(bytes, endsSegment: endsSegment)) }
    }

    public mutating func append(_ bytes: [UInt8], endsSegment: Bool = false) { append(bytes[...], endsSegment: endsSegment) }

    /// `count` bytes of the stream are missing at this point.
    public mutating func gap(_ count: Int) {
        if count > 0 { queue.append(.gap(count)) }
    }

    /// The stream ended: an incomplete PDU is handed out truncated.
    public mutating func finish() {
        queue.append(.end)
    }

    /// Whether a PDU or unmatched bytes are held.
    public var isIdle: Bool {
        switch mode {
        case .header: return header.isEmpty
        case .body: return false
        case .hunting: return huntBuffer.count == huntScan && huntDiscarded == 0
        }
    }

    // MARK: - Input queue

    private var queueFront: Input? {
        guard queueHead < queue.count else { return nil }
        if frontTaken > 0, case .bytes(let slice, let endsSegment) = queue[queueHead] {
            return .bytes(slice[(slice.startIndex + frontTaken)...], endsSegment: endsSegment)
        }
        return queue[queueHead]
    }

    /// Drops the first `count` bytes of the front input, which is bytes and longer than that.
    private mutating func advanceFront(_ count: Int) { frontTaken += count }

    private mutating func popFront() {
        frontTaken = 0
        queueHead += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        } else if queueHead > 32, queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }

    private mutating func replaceFront(_ input: Input) {
        frontTaken = 0
        queue[queueHead] = input
    }

    /// Writes what is left of the front input into the queue, before inputs are put ahead of it.
    private mutating func settleFront() {
        if frontTaken > 0, let front = queueFront { replaceFront(front) }
    }

    private mutating func pushFront(_ input: Input) {
        settleFront()
        if queueHead > 0 {
            queueHead -= 1
            queue[queueHead] = input
        } else {
            queue.insert(input, at: 0)
        }
    }

    /// Up to `limit` bytes from the front of the queue, and whether a segment ends after them;
    /// nil when the front is not bytes.
    private mutating func takeBytes(upTo limit: Int) -> (bytes: ArraySlice<UInt8>, endsSegment: Bool)? {
        guard case .bytes(let slice, let endsSegment)? = queueFront else { return nil }
        if slice.count <= limit {
            popFront()
            return (slice, endsSegment)
        }
        let cut = slice.startIndex + limit
        advanceFront(limit)
        return (slice[..<cut], false)
    }

    // MARK: - Stepping

    /// The next PDU or event; `.needMore` when all input is consumed.
    public mutating func next() -> Step {
        while true {
            switch mode {
            case .header:
                if let step = stepHeader() { return step }
            case .body:
                if let step = stepBody() { return step }
            case .hunting:
                if let step = stepHunting() { return step }
            }
        }
    }

    /// The next PDU when it lies whole at the front of one segment's bytes, no fixed header begun
    /// (what `next` would return as `.frame`, the usual case: `next` takes it here too), taken and
    /// written into `frame`; false, with nothing taken, for anything else (`next` then says what
    /// there is). Its length is read over the segment's memory, and the frame is not wrapped in a step.
    public mutating func nextWholeFrame(into frame: inout MQTTFrame) -> Bool {
        guard case .header = mode, header.isEmpty, queueHead < queue.count,
              case .bytes(let segment, _) = queue[queueHead] else { return false }
        let from = frontTaken
        let maxHeld = maxHeldPDUBytes
        let total = segment.withUnsafeBufferPointer { p -> Int in
            guard case .value(let length, let n, _) = VariableByteInteger.decode(p, at: from + 1) else { return 0 }
            let total = 1 + n + length
            return total <= p.count - from && total <= maxHeld ? total : 0
        }
        guard total > 0 else { return false }
        let start = segment.startIndex + from
        frame = MQTTFrame(held: segment[start..<(start + total)], wireLength: total)
        if start + total == segment.endIndex { popFront() } else { advanceFront(total) }
        return true
    }

    /// Nil: keep stepping (the mode changed).
    private mutating func stepHeader() -> Step? {
        switch queueFront {
        case nil:
            return .needMore
        case .gap(let count)?:
            popFront()
            mode = .hunting
            if !header.isEmpty {
                // The gap splits a fixed header: its bytes start the search for a boundary.
                // (No packet can end inside an incomplete fixed header, so its segment ends
                // are not needed.)
                resetHunt(with: header)
                header = []
                pushFront(.gap(count))
                return nil
            }
            return .skipped(count, .lostInGap)
        case .end?:
            popFront()
            if !header.isEmpty {
                let n = header.count
                header = []
                return .skipped(n, .incompleteAtEnd)
            }
            return .needMore
        case .bytes?:
            // The usual case: a whole PDU at the front of one segment's bytes, taken in one copy.
            var whole = MQTTFrame(held: [], wireLength: 0)
            if nextWholeFrame(into: &whole) { return .frame(whole) }
            guard let one = takeBytes(upTo: 1), let b = one.bytes.first else { return .needMore }
            header.append(b)
            guard header.count >= 2 else { return nil }
            switch VariableByteInteger.decode(header[1...]) {
            case .needMore:
                return nil
            case .tooLong:
                let bad = header
                header = []
                mode = .hunting
                resetHunt()
                return .malformedHeader(bad)
            case .value(let length, let n, _):
                partial = Partial(held: header, wireLength: 1 + n + length, seen: header.count)
                header = []
                mode = .body
                return nil
            }
        }
    }

    private mutating func stepBody() -> Step? {
        let need = partial.wireLength - partial.seen
        if need <= 0 { return emitPartial(unseen: 0) }
        switch queueFront {
        case nil:
            return .needMore
        case .bytes?:
            guard let chunk = takeBytes(upTo: need)?.bytes else { return .needMore }
            let room = partial.contiguous ? max(0, maxHeldPDUBytes - partial.held.count) : 0
            let kept = min(room, chunk.count)
            if kept > 0 { partial.held.append(contentsOf: chunk.prefix(kept)) }
            partial.unheld += chunk.count - kept
            partial.seen += chunk.count
            return nil
        case .gap(let count)?:
            // A gap inside a PDU whose length is known: the PDU is truncated; if the gap ends
            // inside it or at its end, the framer stays in sync.
            let lost = min(count, need)
            partial.missing += lost
            partial.seen += lost
            partial.contiguous = false
            if count > lost { replaceFront(.gap(count - lost)) } else { popFront() }
            return nil
        case .end?:
            popFront()
            return emitPartial(unseen: need)
        }
    }

    private mutating func emitPartial(unseen: Int) -> Step {
        let frame = MQTTFrame(bytes: partial.held, wireLength: partial.wireLength, missingBytes: partial.missing,
                              unheldBytes: partial.unheld, unseenBytes: unseen)
        partial = Partial()
        mode = .header
        return .frame(frame)
    }
}

// MARK: - Resynchronisation

extension MQTTFramer {
    private enum Plausible {
        case header(length: Int, headerLength: Int)
        case no
        case needMore
    }

    private enum Decision {
        case accept, reject, undecided
    }

    private mutating func resetHunt(with bytes: [UInt8] = []) {
        huntBuffer = bytes
        huntScan = 0
        huntSegmentEnds = []
    }

    private mutating func stepHunting() -> Step? {
        if huntScan > resyncWindowBytes {
            let dropped = huntScan
            huntDiscarded += dropped
            huntBuffer.removeFirst(dropped)
            // An end at or before the scan position can no longer end a candidate.
            huntSegmentEnds = huntSegmentEnds.drop(while: { $0 <= dropped }).map { $0 - dropped }
            huntScan = 0
        }
        // Keep a window's worth of lookahead beyond the scan position, so every decision
        // can be made from the bytes held (or waits for more).
        let want = resyncWindowBytes + 6
        while huntBuffer.count - huntScan < want,
              let chunk = takeBytes(upTo: want - (huntBuffer.count - huntScan)) {
            huntBuffer.append(contentsOf: chunk.bytes)
            if chunk.endsSegment { huntSegmentEnds.append(huntBuffer.count) }
        }
        let atEnd: Bool
        switch queueFront {
        case .gap?, .end?: atEnd = true
        default: atEnd = false
        }
        var budget = resyncWindowBytes
        while huntScan < huntBuffer.count, budget > 0 {
            budget -= 1
            switch evaluate(at: huntScan, atEnd: atEnd) {
            case .accept:
                let skipped = huntDiscarded + huntScan
                returnHuntedBytes()
                resetHunt()
                huntDiscarded = 0
                mode = .header
                return skipped > 0 ? .skipped(skipped, .resynchronising) : nil
            case .reject:
                huntScan += 1
            case .undecided:
                if case .bytes? = queueFront { return nil }  // refill first
                return .needMore
            }
        }
        if huntScan < huntBuffer.count { return nil }  // budget spent: compact and refill
        guard atEnd else { return queueFront == nil ? .needMore : nil }
        let skipped = huntDiscarded + huntBuffer.count
        resetHunt()
        huntDiscarded = 0
        switch queueFront {
        case .gap(let count)?:
            if skipped > 0 { return .skipped(skipped, .resynchronising) }
            popFront()
            return .skipped(count, .lostInGap)
        case .end?:
            popFront()
            return skipped > 0 ? .skipped(skipped, .incompleteAtEnd) : .needMore
        default:
            return nil
        }
    }

    /// Puts the bytes from the scan position back at the front of the queue, with the segment
    /// ends among them, to be framed from there.
    private mutating func returnHuntedBytes() {
        var pieces: [Input] = []
        var start = huntScan
        for end in huntSegmentEnds where end > start {
            pieces.append(.bytes(huntBuffer[start..<end], endsSegment: true))
            start = end
        }
        if start < huntBuffer.count { pieces.append(.bytes(huntBuffer[start...], endsSegment: false)) }
        settleFront()
        queue.insert(contentsOf: pieces, at: queueHead)
    }

    private func segmentEnds(at offset: Int) -> Bool {
        // Binary search: byte-by-byte feeding can leave a window's worth of ends.
        var low = 0, high = huntSegmentEnds.count
        while low < high {
            let mid = (low + high) / 2
            if huntSegmentEnds[mid] < offset { low = mid + 1 } else { high = mid }
        }
        return low < huntSegmentEnds.count && huntSegmentEnds[low] == offset
    }

    private func evaluate(at i: Int, atEnd: Bool) -> Decision {
        switch plausibleHeader(at: i) {
        case .needMore:
            return atEnd ? .reject : .undecided
        case .no:
            return .reject
        case .header(let length, let headerLength):
            guard headerLength + length <= resyncWindowBytes else { return .reject }
            let end = i + headerLength + length
            if end > huntBuffer.count { return atEnd ? .reject : .undecided }
            // A segment ended exactly there: evidence enough, without waiting for the next
            // header (which may come only much later). Whatever follows is framed from there.
            if segmentEnds(at: end) { return .accept }
            if end == huntBuffer.count { return atEnd ? .accept : .undecided }
            switch plausibleHeader(at: end) {
            case .header: return .accept
            case .no: return .reject
            case .needMore: return atEnd ? .accept : .undecided
            }
        }
    }

    private func plausibleHeader(at i: Int) -> Plausible {
        guard i >= 0, i < huntBuffer.count else { return .needMore }
        let first = huntBuffer[i]
        let type = MQTTPacketType(rawValue: first >> 4)
        let flags = first & 0x0F
        if type == .reserved { return .no }
        if let required = type.requiredFlags {
            if flags != required { return .no }
        } else if (flags >> 1) & 0b11 == 3 {
            return .no
        }
        switch VariableByteInteger.decode(huntBuffer[...], at: i + 1) {
        case .needMore: return .needMore
        case .tooLong: return .no
        case .value(let length, let n, let minimal):
            guard minimal, Self.lengthIsPlausible(type, flags: flags, length) else { return .no }
            let body = i + 1 + n
            switch type {
            case .publish:
                // The topic name must fit in the packet (with the packet identifier for QoS > 0).
                guard body + 1 < huntBuffer.count else { return .needMore }
                let topicLength = Int(huntBuffer[body]) << 8 | Int(huntBuffer[body + 1])
                let idLength = (flags >> 1) & 0b11 == 0 ? 0 : 2
                guard 2 + topicLength + idLength <= length else { return .no }
            case .connect:
                // The protocol name is "MQTT" or "MQIsdp".
                guard body + 1 < huntBuffer.count else { return .needMore }
                let nameLength = Int(huntBuffer[body]) << 8 | Int(huntBuffer[body + 1])
                guard nameLength == 4 || nameLength == 6 else { return .no }
            default:
                break
            }
            return .header(length: length, headerLength: 1 + n)
        }
    }

    /// The smallest well-formed body of each type, in any version.
    private static func lengthIsPlausible(_ type: MQTTPacketType, flags: UInt8, _ length: Int) -> Bool {
        switch type {
        case .pingreq, .pingresp: return length == 0
        case .puback, .pubrec, .pubrel, .pubcomp, .connack, .unsuback: return length >= 2
        case .suback: return length >= 3
        case .subscribe: return length >= 6
        case .unsubscribe: return length >= 5
        case .publish: return length >= ((flags >> 1) & 0b11 == 0 ? 3 : 5)
        case .connect: return length >= 12
        default: return true
        }
    }
}
