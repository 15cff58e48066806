import Packets

/// Turns TCP segments, in capture order, into ordered per-direction byte streams.
///
/// - In-order payload is handed on as a slice of the packet (no copy); out-of-order segments
///   are held (as slices) until the hole fills, a limit is hit, or the connection ends.
/// - Captures are not always in causal order (`-i any`, multi-queue NICs, taps, merged files):
///   a segment can be recorded after the other side's acknowledgement of it, or after the reply
///   it caused. A segment that acknowledges bytes of the other direction not yet seen is held
///   back (in capture order) until those bytes arrive, so each direction comes out whole and a
///   reply after its request. Bytes the other side acknowledged are awaited for the reorder
///   window (`ReassemblyLimits.reorderPackets` packets of the connection or `reorderTimeout`
///   seconds, whichever ends first); only then are they a gap (`acknowledged`), and what was
///   held back is let go. A hole no acknowledgement explains waits `holeTimeout` seconds.
/// - Overlapping bytes: the first copy wins. A retransmission whose bytes differ from those
///   already delivered is reported as an overlap conflict. It is checked against the direction's
///   recently delivered segments (up to 64 KiB, 16 segments; only the newest one when the
///   run-wide budget is spent) and against held segments that start at the same byte; older
///   bytes are not compared. A keep-alive (one byte or none, just before the next byte) is not
///   a conflict.
/// - A capture that starts mid-connection is followed from its first segment; the dissector is
///   told so, since its first bytes may sit inside a PDU.
/// - A new SYN on a pair whose connection has closed starts a new connection (a new stream number).
public struct TCPReassembler {
    public let limits: ReassemblyLimits
    /// Decides which end is the server when the handshake is not in the capture.
    private let isServerPort: (UInt16) -> Bool

    private var connections = FlowTable<Connection>()
    /// Recently closed pairs: stray ACKs and retransmitted FINs after a close must not open a connection.
    private var closedAt = FlowTable<Double>()
    /// `closedAt`'s pairs by close time, for the sweep to let go of the old ones.
    private var closedOrder = ClosedPairExpiry()
    private var nextStream = 0
    private var totalBuffered = 0
    /// Memory charged for the delivered-bytes windows of all connections.
    private var totalRecent = 0
    private var lastSweep = -Double.infinity
    /// Capture time of the segment being processed.
    private var now = 0.0

    /// Bytes given up because a buffering limit or the hole timeout was hit, over the whole run.
    public private(set) var droppedByLimits = 0
    /// Connections flushed early by the connection limit or the idle timeout.
    public private(set) var flushedConnections = 0

    /// - Parameter firstStream: the number of the first connection seen; a run over several
    ///   captures continues the numbering so that streams stay distinct.
    public init(limits: ReassemblyLimits = ReassemblyLimits(), firstStream: Int = 0,
                isServerPort: @escaping (UInt16) -> Bool = { _ in false }) {
        self.limits = limits
        self.nextStream = firstStream
        self.isServerPort = isServerPort
    }

    public var activeConnections: Int { connections.count }
    public var bufferedBytes: Int { totalBuffered }
    /// Memory charged for the windows of recently delivered bytes (`DeliveredWindow`), all connections.
    public var retainedDeliveredBytes: Int { totalRecent }

    /// Feeds one segment seen at capture time `time` (seconds); events are appended to `events`.
    /// `origin` says where it was recorded: should it be held back, what it completes later is
    /// preceded by a `recordedAt` event naming it.
    public mutating func process(_ segment: TCPSegment, time: Double, origin: CaptureOrigin? = nil, into events: inout [ReassemblyEvent]) {
        now = time
        if time - lastSweep >= 1 {
            lastSweep = time
            sweepIdle(now: time, into: &events)
        }
        let key = FlowKey(segment.source, segment.destination)
        let flags = segment.flags
        // One lookup for a packet of a known connection (nearly all of them).
        var found = connections[key]
        if found == nil {
            let hasData = !segment.payload.isEmpty || segment.missingPayload > 0
            if let closed = closedAt[key], !flags.contains(.syn) {
                // Stray packets of a connection that is over; only data opens a new one after a while.
                if !hasData || time - closed < limits.idleTimeout { return }
            }
            guard flags.contains(.syn) || hasData else { return }
            if flags.contains(.rst) { return }
            closedAt[key] = nil
            found = open(key, segment, time: time, into: &events)
        } else if flags.contains(.syn) && !flags.contains(.ack), let conn = found,
                  let isn = conn[conn.side(of: segment.source)].nextSequence,
                  SequenceNumber.distance(from: isn, to: segment.sequence &+ 1) != 0 {
            // A fresh SYN with a new initial sequence number on a live pair: the old connection is over.
            close(key, reason: conn.reset ? .reset : .fin, into: &events)
            found = open(key, segment, time: time, into: &events)
        }
        guard let conn = found else { return }
        conn.lastSeen = time
        conn.packets &+= 1
        let side = conn.side(of: segment.source)
        if flags.contains(.ack), Self.mustWait(segment, side: side, conn: conn) {
            holdBack(segment, origin: origin, side: side, conn: conn, into: &events)
        } else {
            handle(segment, side: side, conn: conn, into: &events)
            if !conn.deferred.isEmpty { releaseDeferred(conn: conn, into: &events) }
        }
        expireHoles(conn: conn, into: &events)
        if conn[.clientToServer].acknowledgedWaitSince != nil || conn[.serverToClient].acknowledgedWaitSince != nil {
            expireAcknowledgedWaits(conn: conn, into: &events)
        }
        if conn.reset {
            close(key, reason: .reset, into: &events)
            return
        }
        if conn.isFinished { close(key, reason: .fin, into: &events) }
    }

    /// A segment's acknowledgement, then its bytes; the clocks of both directions kept up.
    @inline(__always)
    private mutating func handle(_ segment: TCPSegment, side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        let nextBefore = (conn[.clientToServer].nextSequence, conn[.serverToClient].nextSequence)
        // RFC 9293 §3.10.7.4: the acknowledgment field is significant only when ACK is set.
        // Handled before this segment's own bytes: what it acknowledges was sent earlier.
        if segment.flags.contains(.ack) {
            noteAcknowledgement(segment.acknowledgement, of: side.opposite, conn: conn, into: &events)
        }
        accept(segment, side: side, conn: conn, into: &events)
        if segment.flags.contains(.rst) { conn.reset = true }
        Self.updateHoleClock(.clientToServer, nextBefore: nextBefore.0, conn: conn, now: now)
        Self.updateHoleClock(.serverToClient, nextBefore: nextBefore.1, conn: conn, now: now)
        Self.updateAcknowledgedWait(.clientToServer, conn: conn, now: now)
        Self.updateAcknowledgedWait(.serverToClient, conn: conn, now: now)
    }

    /// Ends every connection (end of capture): holes become gaps, held data is delivered.
    public mutating func flushAll(into events: inout [ReassemblyEvent]) {
        var open: [(key: FlowKey, stream: Int)] = []
        connections.forEach { key, conn in open.append((key, conn.stream)) }
        let order = open.sorted { $0.stream < $1.stream }.map(\.key)
        for key in order { close(key, reason: .endOfCapture, into: &events) }
    }

    // MARK: - Connections

    @discardableResult
    private mutating func open(_ key: FlowKey, _ segment: TCPSegment, time: Double, into events: inout [ReassemblyEvent]) -> Connection {
        if connections.count >= limits.maxConnections { evictOldest(into: &events) }
        let client: Endpoint, server: Endpoint
        let f = segment.flags
        if f.contains(.syn) && !f.contains(.ack) {
            client = segment.source; server = segment.destination
        } else if f.contains(.syn) {
            client = segment.destination; server = segment.source
        } else {
            // No handshake: the side on a known server port is the server, else the lower port.
            let srcServer = isServerPort(segment.source.port), dstServer = isServerPort(segment.destination.port)
            if srcServer && !dstServer || (!dstServer && segment.source.port < segment.destination.port) {
                client = segment.destination; server = segment.source
            } else {
                client = segment.source; server = segment.destination
            }
        }
        let midStream = !f.contains(.syn)
        let conn = Connection(stream: nextStream, client: client, server: server, lastSeen: time)
        nextStream += 1
        connections[key] = conn
        events.append(.opened(stream: conn.stream, client: client, server: server, midStream: midStream))
        return conn
    }

    private mutating func close(_ key: FlowKey, reason: CloseReason, into events: inout [ReassemblyEvent]) {
        guard let conn = connections[key] else { return }
        let atEndOfCapture = reason == .endOfCapture
        var reason = reason
        // What waited for the other side's bytes is let go first, in capture order; its FINs
        // or RST say how the connection ended.
        if !conn.deferred.isEmpty {
            endAcknowledgedWait(.clientToServer, conn: conn, into: &events)
            endAcknowledgedWait(.serverToClient, conn: conn, into: &events)
            releaseDeferred(conn: conn, all: true, into: &events)
            if conn.reset { reason = .reset } else if conn.isFinished { reason = .fin }
        }
        connections.removeValue(forKey: key)
        for side in [FlowSide.clientToServer, .serverToClient] {
            flushPending(side: side, conn: conn, reason: .lostSegment, into: &events)
            if !conn[side].finished {
                conn[side].finished = true
                events.append(.ended(stream: conn.stream, side: side))
            }
        }
        // After the flush: delivering the held data adds to the window it releases here.
        totalRecent -= conn[.clientToServer].recent.retainedCost + conn[.serverToClient].recent.retainedCost
        events.append(.closed(stream: conn.stream, reason: reason))
        // At the end of the capture no packet follows: the pair is not remembered (flushing
        // every connection grew the dictionary by all of them, at the run's peak of memory).
        guard !atEndOfCapture else { return }
        closedAt[key] = conn.lastSeen
        closedOrder.add(key, closedAt: conn.lastSeen)
    }

    private mutating func sweepIdle(now: Double, into events: inout [ReassemblyEvent]) {
        var idle: [(key: FlowKey, stream: Int)] = []
        // Holes in connections that have gone quiet, in stream order (the output's order).
        var waiting: [(key: FlowKey, stream: Int)] = []
        // One pass finds both (it was one pass each): a connection idle is closed as idle,
        // whatever its holes; the others' holes are given up after the idle ones are closed.
        connections.forEach { key, conn in
            if now - conn.lastSeen >= limits.idleTimeout {
                idle.append((key, conn.stream))
            } else if conn[.clientToServer].holeSince.map({ now - $0 >= limits.holeTimeout }) == true
                || conn[.serverToClient].holeSince.map({ now - $0 >= limits.holeTimeout }) == true
                || conn[.clientToServer].acknowledgedWaitSince.map({ now - $0 >= limits.reorderTimeout }) == true
                || conn[.serverToClient].acknowledgedWaitSince.map({ now - $0 >= limits.reorderTimeout }) == true {
                waiting.append((key, conn.stream))
            }
        }
        for (key, _) in idle.sorted(by: { $0.stream < $1.stream }) {
            flushedConnections += 1
            close(key, reason: .idle, into: &events)
        }
        for (key, _) in waiting.sorted(by: { $0.stream < $1.stream }) {
            guard let conn = connections[key] else { continue }
            expireHoles(conn: conn, into: &events)
            expireAcknowledgedWaits(conn: conn, into: &events)
            if conn.reset {
                close(key, reason: .reset, into: &events)
                continue
            }
            // The data released may end with the FIN that finishes the connection.
            if conn.isFinished { close(key, reason: .fin, into: &events) }
        }
        // The pairs closed an idle timeout ago or more, from the oldest (the table keeps the
        // others, as a filter of all of it would).
        closedOrder.removeDue({ now - $0 >= limits.idleTimeout }) { key, time in
            if closedAt[key] == time { closedAt[key] = nil }
        }
    }

    /// Flushes the least recently active tenth of the connections, so the cost is paid rarely.
    private mutating func evictOldest(into events: inout [ReassemblyEvent]) {
        // The tenth is selected, then sorted (not all sorted), as plain values: time, number and
        // key of each connection. Equal times go in stream order.
        struct Candidate { var lastSeen: Double; var stream: Int; var key: FlowKey }
        func less(_ a: Candidate, _ b: Candidate) -> Bool {
            a.lastSeen < b.lastSeen || (a.lastSeen == b.lastSeen && a.stream < b.stream)
        }
        var byTime: [Candidate] = []
        byTime.reserveCapacity(connections.count)
        connections.forEach { key, conn in
            byTime.append(Candidate(lastSeen: conn.lastSeen, stream: conn.stream, key: key))
        }
        let count = min(max(1, limits.maxConnections / 10), byTime.count)
        byTime.withUnsafeMutableBufferPointer { a in
            // Quickselect: the `count` least first, in any order (median-of-three pivots).
            var low = 0, high = a.count - 1
            while low < high {
                let mid = low + (high - low) / 2
                if less(a[mid], a[low]) { a.swapAt(mid, low) }
                if less(a[high], a[low]) { a.swapAt(high, low) }
                if less(a[high], a[mid]) { a.swapAt(high, mid) }
                let pivot = a[mid]
                var i = low, j = high
                while i <= j {
                    while less(a[i], pivot) { i += 1 }
                    while less(pivot, a[j]) { j -= 1 }
                    if i <= j {
                        a.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if count - 1 <= j { high = j } else if count - 1 >= i { low = i } else { break }
            }
            a[0..<count].sort(by: less)
        }
        let victims = byTime[0..<count].map(\.key)
        for key in victims {
            flushedConnections += 1
            close(key, reason: .connectionLimit, into: &events)
        }
        if closedAt.count > limits.maxConnections {
            closedAt.removeAll()
            closedOrder.removeAll()
        }
    }

    // MARK: - Segments

    private mutating func accept(_ segment: TCPSegment, side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        var seq = segment.sequence
        if segment.flags.contains(.syn) {
            if conn[side].nextSequence == nil { conn[side].nextSequence = seq &+ 1 }
            seq &+= 1
        }
        if conn[side].nextSequence == nil { conn[side].nextSequence = seq }
        let fin = segment.flags.contains(.fin)
        guard !conn[side].finished else { return }
        guard let next = conn[side].nextSequence else { return }
        let ahead = SequenceNumber.distance(from: next, to: seq)
        if ahead > 0 {
            hold(HalfStream.Pending(sequence: seq, bytes: segment.payload, missing: segment.missingPayload, fin: fin),
                 side: side, conn: conn, into: &events)
        } else {
            // Handed the segment's payload itself: a held piece made of it retained and released
            // the packet's bytes once more per packet.
            deliver(sequence: seq, bytes: segment.payload, missing: segment.missingPayload, fin: fin, side: side, conn: conn, into: &events)
            drain(side: side, conn: conn, into: &events)
        }
    }

    /// Delivers a segment (or a held piece) that starts at or before the next expected byte (the
    /// part already seen is dropped).
    private mutating func deliver(sequence: UInt32, bytes: ArraySlice<UInt8>, missing: Int, fin: Bool, side: FlowSide, conn: Connection,
                                  into events: inout [ReassemblyEvent]) {
        guard let next = conn[side].nextSequence else { return }
        let behind = -SequenceNumber.distance(from: next, to: sequence) // ≥ 0
        let total = bytes.count + missing
        // A keep-alive repeats the byte before the next one, maybe with garbage (RFC 9293 §3.8.4).
        let keepAlive = behind == 1 && total <= 1 && !fin
        if behind > 0 && !keepAlive { Self.checkOverlap(bytes, at: sequence, side: side, conn: conn, into: &events) }
        if behind == 0, !bytes.isEmpty {
            // The usual case: all of it is new, handed on as it is (a slice of it is one more reference).
            deliverFresh(bytes, next: next, side: side, conn: conn, into: &events)
        } else if behind < bytes.count {
            deliverFresh(bytes[(bytes.startIndex + behind)...], next: next, side: side, conn: conn, into: &events)
        }
        if behind < total && missing > 0 {
            let lost = min(missing, total - behind)
            events.append(.gap(stream: conn.stream, side: side, count: lost, reason: .truncatedPacket))
            conn[side].nextSequence = (conn[side].nextSequence ?? next) &+ UInt32(lost)
        }
        if fin, behind <= total {
            conn[side].finished = true
            events.append(.ended(stream: conn.stream, side: side))
        }
    }

    /// Hands on `fresh`, the bytes from the next expected one, and keeps them in the window.
    private mutating func deliverFresh(_ fresh: ArraySlice<UInt8>, next: UInt32, side: FlowSide, conn: Connection,
                                       into events: inout [ReassemblyEvent]) {
        events.append(.data(stream: conn.stream, side: side, bytes: fresh))
        let end = next &+ UInt32(fresh.count)
        conn[side].nextSequence = end
        remember(fresh, end: end, side: side, conn: conn)
    }

    /// Keeps a delivered slice (no copy) in the direction's window of recent bytes, within the
    /// run-wide budget: once it is spent, a direction keeps only its newest slice.
    private mutating func remember(_ bytes: ArraySlice<UInt8>, end: UInt32, side: FlowSide, conn: Connection) {
        let before = conn[side].recent.retainedCost
        conn[side].recent.append(bytes, end: end)
        if totalRecent - before + conn[side].recent.retainedCost > limits.maxBufferedBytesTotal {
            conn[side].recent.keepNewestOnly()
        }
        totalRecent += conn[side].recent.retainedCost - before
    }

    /// Compares the retransmitted part of a segment with the recently delivered bytes.
    private static func checkOverlap(_ bytes: ArraySlice<UInt8>, at sequence: UInt32, side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        let differing = conn[side].recent.differingBytes(bytes, at: sequence)
        if differing > 0 {
            events.append(.overlapConflict(stream: conn.stream, side: side, count: differing))
        }
    }

    private mutating func hold(_ piece: HalfStream.Pending, side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        guard !piece.bytes.isEmpty || piece.missing > 0 || piece.fin else { return }
        // Keep sorted by sequence; an exact duplicate is dropped (first copy wins).
        var index = conn[side].pending.endIndex
        while index > 0, SequenceNumber.distance(from: conn[side].pending[index - 1].sequence, to: piece.sequence) < 0 { index -= 1 }
        if index > 0, conn[side].pending[index - 1].sequence == piece.sequence {
            let old = conn[side].pending[index - 1]
            if old.bytes.count >= piece.bytes.count {
                let n = piece.bytes.count
                if !old.bytes.prefix(n).elementsEqual(piece.bytes) {
                    events.append(.overlapConflict(stream: conn.stream, side: side, count: n))
                }
                return
            }
        }
        conn[side].pending.insert(piece, at: index)
        conn[side].bufferedBytes += piece.bytes.count
        totalBuffered += piece.bytes.count
        if conn[side].bufferedBytes > limits.maxBufferedBytesPerDirection || totalBuffered > limits.maxBufferedBytesTotal {
            flushPending(side: side, conn: conn, reason: .bufferLimit, into: &events)
        }
        // The other side may already have acknowledged past the hole.
        skipAcknowledgedHoles(side: side, conn: conn, into: &events)
    }

    /// Delivers held segments that have become in order.
    private mutating func drain(side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        while let first = conn[side].pending.first, let next = conn[side].nextSequence,
              SequenceNumber.distance(from: next, to: first.sequence) <= 0, !conn[side].finished {
            conn[side].pending.removeFirst()
            conn[side].bufferedBytes -= first.bytes.count
            totalBuffered -= first.bytes.count
            deliver(sequence: first.sequence, bytes: first.bytes, missing: first.missing, fin: first.fin,
                    side: side, conn: conn, into: &events)
        }
    }

    /// Gives up every hole in one direction: each becomes a gap and the held data is delivered.
    private mutating func flushPending(side: FlowSide, conn: Connection, reason: GapReason, into events: inout [ReassemblyEvent]) {
        while !conn[side].pending.isEmpty {
            if conn[side].finished {
                // Data beyond a FIN cannot belong to the stream.
                totalBuffered -= conn[side].bufferedBytes
                conn[side].pending.removeAll()
                conn[side].bufferedBytes = 0
                return
            }
            skipHole(side: side, conn: conn, reason: reason, into: &events)
        }
    }

    /// Reports the hole before the first held segment as a gap, up to `limit` if given (bytes
    /// from `limit` on stay awaited), and delivers the held data that becomes in order.
    private mutating func skipHole(side: FlowSide, upTo limit: UInt32? = nil, conn: Connection, reason: GapReason, into events: inout [ReassemblyEvent]) {
        if let first = conn[side].pending.first, let next = conn[side].nextSequence {
            var count = SequenceNumber.distance(from: next, to: first.sequence)
            if let limit { count = min(count, SequenceNumber.distance(from: next, to: limit)) }
            if count > 0 {
                if reason == .bufferLimit || reason == .holeTimeout { droppedByLimits += count }
                events.append(.gap(stream: conn.stream, side: side, count: count, reason: reason))
                conn[side].nextSequence = next &+ UInt32(count)
            }
        }
        drain(side: side, conn: conn, into: &events)
    }

    // MARK: - Acknowledgements and hole age

    /// Records the other side's acknowledgement of `side`'s bytes and gives up the holes it covers.
    private mutating func noteAcknowledgement(_ ack: UInt32, of side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        if let known = conn[side].peerAcknowledged, SequenceNumber.distance(from: known, to: ack) <= 0 {
            // Never move back (a reordered older ACK) unless the known value is useless: not
            // ahead of the next byte, e.g. left behind by 2^31 bytes of data.
            guard let next = conn[side].nextSequence, SequenceNumber.distance(from: next, to: known) <= 0 else { return }
        }
        conn[side].peerAcknowledged = ack
        skipAcknowledgedHoles(side: side, conn: conn, into: &events)
    }

    /// A hole whose start the receiver has acknowledged, and which the reorder window has
    /// already waited for in vain, will not be filled in the capture (a retransmission of
    /// acknowledged bytes would be spurious): it becomes a gap, as far as that acknowledgement
    /// reaches, and the data after it is delivered. Nothing happens while no data is held, so a
    /// bogus ACK costs nothing until there is a hole.
    private mutating func skipAcknowledgedHoles(side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        while !conn[side].finished, !conn[side].pending.isEmpty, let over = conn[side].waitedUpTo,
              let next = conn[side].nextSequence, SequenceNumber.distance(from: next, to: over) > 0 {
            skipHole(side: side, upTo: over, conn: conn, reason: .acknowledged, into: &events)
        }
    }

    // MARK: - The reorder window

    /// Whether `ack` acknowledges bytes of `side` that it has not delivered and still awaits.
    private static func awaits(_ ack: UInt32, side: FlowSide, of conn: Connection) -> Bool {
        guard !conn[side].finished, let next = conn[side].nextSequence, SequenceNumber.distance(from: next, to: ack) > 0 else { return false }
        if let over = conn[side].waitedUpTo, SequenceNumber.distance(from: ack, to: over) >= 0 { return false }
        return true
    }

    /// A segment with bytes (or FIN or RST) that acknowledges bytes of the other direction the
    /// capture has not shown yet: it was sent after they arrived, so it waits for them.
    private static func mustWait(_ segment: TCPSegment, side: FlowSide, conn: Connection) -> Bool {
        guard !segment.payload.isEmpty || segment.missingPayload > 0 || segment.flags.contains(.fin) || segment.flags.contains(.rst)
        else { return false }
        return Self.awaits(segment.acknowledgement, side: side.opposite, of: conn)
    }

    /// Keeps a segment back until the bytes it acknowledges arrive; its acknowledgement starts
    /// the other direction's wait now. Its bytes count against the buffer limits.
    private mutating func holdBack(_ segment: TCPSegment, origin: CaptureOrigin?, side: FlowSide, conn: Connection,
                                   into events: inout [ReassemblyEvent]) {
        noteAcknowledgement(segment.acknowledgement, of: side.opposite, conn: conn, into: &events)
        Self.updateAcknowledgedWait(side.opposite, conn: conn, now: now)
        conn.deferred.append(Connection.HeldBack(segment: segment, origin: origin))
        let cost = Self.heldBackCost(segment)
        conn[side].bufferedBytes += cost
        totalBuffered += cost
        if conn[side].bufferedBytes > limits.maxBufferedBytesPerDirection || totalBuffered > limits.maxBufferedBytesTotal {
            endAcknowledgedWait(side.opposite, conn: conn, into: &events)
            releaseDeferred(conn: conn, into: &events)
        }
    }

    /// What a held-back segment is charged against the buffer limits: its bytes, and the packet
    /// and entry it keeps alive, so that segments without payload (FIN, RST) are bounded too.
    static func heldBackCost(_ segment: TCPSegment) -> Int { segment.payload.count + 128 }

    /// Handles the held-back segments that no longer wait (all of them with `all`), in capture
    /// order, until none can go.
    private mutating func releaseDeferred(conn: Connection, all: Bool = false, into events: inout [ReassemblyEvent]) {
        var index = 0
        while index < conn.deferred.count {
            let segment = conn.deferred[index].segment
            let side = conn.side(of: segment.source)
            if !all && Self.awaits(segment.acknowledgement, side: side.opposite, of: conn) {
                index += 1
                continue
            }
            let origin = conn.deferred.remove(at: index).origin
            let cost = Self.heldBackCost(segment)
            conn[side].bufferedBytes -= cost
            totalBuffered -= cost
            if let origin { events.append(.recordedAt(stream: conn.stream, origin: origin)) }
            handle(segment, side: side, conn: conn, into: &events)
            if origin != nil { events.append(.recordedAt(stream: conn.stream, origin: nil)) }
            // What it delivered may free an earlier one.
            index = 0
        }
    }

    /// Starts the wait when the other side has acknowledged bytes this direction has not
    /// delivered, restarts it when the direction moved on, stops it when none are awaited.
    @inline(__always)
    private static func updateAcknowledgedWait(_ side: FlowSide, conn: Connection, now: Double) {
        // The usual case, once a packet: nothing acknowledged is missing, none was waited for.
        if conn[side].acknowledgedWaitSince == nil, conn[side].waitedUpTo == nil,
           let ack = conn[side].peerAcknowledged, let next = conn[side].nextSequence, SequenceNumber.distance(from: next, to: ack) <= 0 {
            return
        }
        updateAcknowledgedWaitSlowly(side, conn: conn, now: now)
    }

    private static func updateAcknowledgedWaitSlowly(_ side: FlowSide, conn: Connection, now: Double) {
        if let over = conn[side].waitedUpTo, let next = conn[side].nextSequence, SequenceNumber.distance(from: next, to: over) <= 0 {
            conn[side].waitedUpTo = nil
        }
        guard let ack = conn[side].peerAcknowledged, awaits(ack, side: side, of: conn), let next = conn[side].nextSequence else {
            conn[side].acknowledgedWaitSince = nil
            return
        }
        if conn[side].acknowledgedWaitSince == nil || conn[side].waitingAt != next {
            conn[side].acknowledgedWaitSince = now
            conn[side].acknowledgedWaitPackets = conn.packets
            conn[side].waitingAt = next
        }
    }

    /// Ends the waits whose window has closed.
    private mutating func expireAcknowledgedWaits(conn: Connection, into events: inout [ReassemblyEvent]) {
        expireAcknowledgedWait(.clientToServer, conn: conn, into: &events)
        expireAcknowledgedWait(.serverToClient, conn: conn, into: &events)
    }

    private mutating func expireAcknowledgedWait(_ side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        guard let since = conn[side].acknowledgedWaitSince,
              conn.packets &- conn[side].acknowledgedWaitPackets >= limits.reorderPackets || now - since >= limits.reorderTimeout
        else { return }
        endAcknowledgedWait(side, conn: conn, into: &events)
        releaseDeferred(conn: conn, into: &events)
    }

    /// Stops waiting for the bytes the other side acknowledged: the holes before them become
    /// gaps; the segments held back for them may go.
    private mutating func endAcknowledgedWait(_ side: FlowSide, conn: Connection, into events: inout [ReassemblyEvent]) {
        conn[side].acknowledgedWaitSince = nil
        guard let ack = conn[side].peerAcknowledged, let next = conn[side].nextSequence, !conn[side].finished,
              SequenceNumber.distance(from: next, to: ack) > 0 else { return }
        conn[side].waitedUpTo = ack
        let before = conn[side].nextSequence
        skipAcknowledgedHoles(side: side, conn: conn, into: &events)
        Self.updateHoleClock(side, nextBefore: before, conn: conn, now: now)
    }

    /// Starts the hole clock when data starts waiting, restarts it when the stream moved on
    /// (a new hole now blocks), stops it when nothing waits.
    private static func updateHoleClock(_ side: FlowSide, nextBefore: UInt32?, conn: Connection, now: Double) {
        if conn[side].pending.isEmpty || conn[side].finished {
            conn[side].holeSince = nil
        } else if conn[side].holeSince == nil || conn[side].nextSequence != nextBefore {
            conn[side].holeSince = now
        }
    }

    /// Gives up holes that have kept data waiting for longer than the hole timeout.
    private mutating func expireHoles(conn: Connection, into events: inout [ReassemblyEvent]) {
        for side in [FlowSide.clientToServer, .serverToClient] {
            guard let since = conn[side].holeSince, now - since >= limits.holeTimeout else { continue }
            let before = conn[side].nextSequence
            skipHole(side: side, conn: conn, reason: .holeTimeout, into: &events)
            Self.updateHoleClock(side, nextBefore: before, conn: conn, now: now)
        }
    }
}
