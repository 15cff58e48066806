import Packets

/// Turns TCP segments, in capture order, into ordered per-direction byte streams.
///
/// - In-order payload is handed on as a slice of the packet (no copy); out-of-order segments
///   are held (as slices) until the hole fills, a limit is hit, or the connection ends.
/// - Overlapping bytes: the first copy wins. A retransmission whose bytes differ from those
///   already delivered is reported as an overlap conflict (checked against the last delivered
///   segment and against held segments).
/// - A capture that starts mid-connection is followed from its first segment; the dissector is
///   told so, since its first bytes may sit inside a PDU.
/// - A new SYN on a pair whose connection has closed starts a new connection (a new stream number).
public struct TCPReassembler {
    public let limits: ReassemblyLimits
    /// Decides which end is the server when the handshake is not in the capture.
    private let isServerPort: (UInt16) -> Bool

    private var connections: [FlowKey: Connection] = [:]
    /// Recently closed pairs: stray ACKs and retransmitted FINs after a close must not open a connection.
    private var closedAt: [FlowKey: Double] = [:]
    private var nextStream = 0
    private var totalBuffered = 0
    private var lastSweep = -Double.infinity

    /// Bytes given up because a limit was hit, over the whole run.
    public private(set) var droppedByLimits = 0
    /// Connections flushed early by the connection limit or the idle timeout.
    public private(set) var flushedConnections = 0

    public init(limits: ReassemblyLimits = ReassemblyLimits(), isServerPort: @escaping (UInt16) -> Bool = { _ in false }) {
        self.limits = limits
        self.isServerPort = isServerPort
    }

    public var activeConnections: Int { connections.count }
    public var bufferedBytes: Int { totalBuffered }

    /// Feeds one segment seen at capture time `time` (seconds); events are appended to `events`.
    public mutating func process(_ segment: TCPSegment, time: Double, into events: inout [ReassemblyEvent]) {
        if time - lastSweep >= 1 {
            lastSweep = time
            sweepIdle(now: time, into: &events)
        }
        let key = FlowKey(segment.source, segment.destination)
        let flags = segment.flags
        if connections[key] == nil {
            let hasData = !segment.payload.isEmpty || segment.missingPayload > 0
            if let closed = closedAt[key], !flags.contains(.syn) {
                // Stray packets of a connection that is over; only data opens a new one after a while.
                if !hasData || time - closed < limits.idleTimeout { return }
            }
            guard flags.contains(.syn) || hasData else { return }
            if flags.contains(.rst) { return }
            closedAt[key] = nil
            open(key, segment, time: time, into: &events)
        } else if flags.contains(.syn) && !flags.contains(.ack), let conn = connections[key],
                  let isn = conn[conn.side(of: segment.source)].nextSequence,
                  SequenceNumber.distance(from: isn, to: segment.sequence &+ 1) != 0 {
            // A fresh SYN with a new initial sequence number on a live pair: the old connection is over.
            close(key, reason: conn.reset ? .reset : .fin, into: &events)
            open(key, segment, time: time, into: &events)
        }
        guard var conn = connections[key] else { return }
        conn.lastSeen = time
        let side = conn.side(of: segment.source)
        accept(segment, side: side, conn: &conn, into: &events)
        if flags.contains(.rst) {
            conn.reset = true
            connections[key] = conn
            close(key, reason: .reset, into: &events)
            return
        }
        connections[key] = conn
        if conn.isFinished { close(key, reason: .fin, into: &events) }
    }

    /// Ends every connection (end of capture): holes become gaps, held data is delivered.
    public mutating func flushAll(into events: inout [ReassemblyEvent]) {
        let order = connections.values.sorted { $0.stream < $1.stream }.map { FlowKey($0.client, $0.server) }
        for key in order { close(key, reason: .endOfCapture, into: &events) }
    }

    // MARK: - Connections

    private mutating func open(_ key: FlowKey, _ segment: TCPSegment, time: Double, into events: inout [ReassemblyEvent]) {
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
    }

    private mutating func close(_ key: FlowKey, reason: CloseReason, into events: inout [ReassemblyEvent]) {
        guard var conn = connections.removeValue(forKey: key) else { return }
        for side in [FlowSide.clientToServer, .serverToClient] {
            flushPending(side: side, conn: &conn, reason: .unfilledAtClose, into: &events)
            if !conn[side].finished {
                conn[side].finished = true
                events.append(.ended(stream: conn.stream, side: side))
            }
        }
        events.append(.closed(stream: conn.stream, reason: reason))
        closedAt[key] = conn.lastSeen
    }

    private mutating func sweepIdle(now: Double, into events: inout [ReassemblyEvent]) {
        var idle: [(key: FlowKey, stream: Int)] = []
        for (key, conn) in connections where now - conn.lastSeen >= limits.idleTimeout { idle.append((key, conn.stream)) }
        for (key, _) in idle.sorted(by: { $0.stream < $1.stream }) {
            flushedConnections += 1
            close(key, reason: .idle, into: &events)
        }
        closedAt = closedAt.filter { now - $0.value < limits.idleTimeout }
    }

    /// Flushes the least recently active tenth of the connections, so the cost is paid rarely.
    private mutating func evictOldest(into events: inout [ReassemblyEvent]) {
        let victims = connections.map { (key: $0.key, lastSeen: $0.value.lastSeen) }
            .sorted { $0.lastSeen < $1.lastSeen }
            .prefix(max(1, limits.maxConnections / 10))
        for (key, _) in victims {
            flushedConnections += 1
            close(key, reason: .connectionLimit, into: &events)
        }
        if closedAt.count > limits.maxConnections { closedAt.removeAll(keepingCapacity: true) }
    }

    // MARK: - Segments

    private mutating func accept(_ segment: TCPSegment, side: FlowSide, conn: inout Connection, into events: inout [ReassemblyEvent]) {
        var seq = segment.sequence
        if segment.flags.contains(.syn) {
            if conn[side].nextSequence == nil { conn[side].nextSequence = seq &+ 1 }
            seq &+= 1
        }
        if conn[side].nextSequence == nil { conn[side].nextSequence = seq }
        let fin = segment.flags.contains(.fin)
        guard !conn[side].finished else { return }
        let piece = HalfStream.Pending(sequence: seq, bytes: segment.payload, missing: segment.missingPayload, fin: fin)
        guard let next = conn[side].nextSequence else { return }
        let ahead = SequenceNumber.distance(from: next, to: seq)
        if ahead > 0 {
            hold(piece, side: side, conn: &conn, into: &events)
        } else {
            deliver(piece, side: side, conn: &conn, into: &events)
            drain(side: side, conn: &conn, into: &events)
        }
    }

    /// Delivers a segment that starts at or before the next expected byte (the part already seen is dropped).
    private mutating func deliver(_ piece: HalfStream.Pending, side: FlowSide, conn: inout Connection, into events: inout [ReassemblyEvent]) {
        guard let next = conn[side].nextSequence else { return }
        let behind = -SequenceNumber.distance(from: next, to: piece.sequence) // ≥ 0
        let total = piece.bytes.count + piece.missing
        if behind > 0 { checkOverlap(piece, side: side, conn: &conn, into: &events) }
        if behind < piece.bytes.count {
            let fresh = piece.bytes[(piece.bytes.startIndex + behind)...]
            events.append(.data(stream: conn.stream, side: side, bytes: fresh))
            conn[side].nextSequence = next &+ UInt32(fresh.count)
            conn[side].lastDelivered = fresh
            conn[side].lastDeliveredEnd = next &+ UInt32(fresh.count)
        }
        if behind < total && piece.missing > 0 {
            let lost = min(piece.missing, total - behind)
            events.append(.gap(stream: conn.stream, side: side, count: lost, reason: .truncatedPacket))
            conn[side].nextSequence = (conn[side].nextSequence ?? next) &+ UInt32(lost)
        }
        if piece.fin, behind <= total {
            conn[side].finished = true
            events.append(.ended(stream: conn.stream, side: side))
        }
    }

    /// Compares the retransmitted part of a segment with the last delivered bytes.
    private func checkOverlap(_ piece: HalfStream.Pending, side: FlowSide, conn: inout Connection, into events: inout [ReassemblyEvent]) {
        let last = conn[side].lastDelivered
        guard !last.isEmpty else { return }
        let lastStart = conn[side].lastDeliveredEnd &- UInt32(last.count)
        var differing = 0
        for (i, b) in piece.bytes.enumerated() {
            let d = SequenceNumber.distance(from: lastStart, to: piece.sequence &+ UInt32(i))
            if d < 0 { continue }
            if d >= last.count { break }
            if last[last.startIndex + d] != b { differing += 1 }
        }
        if differing > 0 {
            events.append(.overlapConflict(stream: conn.stream, side: side, count: differing))
        }
    }

    private mutating func hold(_ piece: HalfStream.Pending, side: FlowSide, conn: inout Connection, into events: inout [ReassemblyEvent]) {
        var half = conn[side]
        guard !piece.bytes.isEmpty || piece.missing > 0 || piece.fin else { return }
        // Keep sorted by sequence; an exact duplicate is dropped (first copy wins).
        var index = half.pending.endIndex
        while index > 0, SequenceNumber.distance(from: half.pending[index - 1].sequence, to: piece.sequence) < 0 { index -= 1 }
        if index > 0, half.pending[index - 1].sequence == piece.sequence {
            let old = half.pending[index - 1]
            if old.bytes.count >= piece.bytes.count {
                let n = piece.bytes.count
                if !old.bytes.prefix(n).elementsEqual(piece.bytes) {
                    events.append(.overlapConflict(stream: conn.stream, side: side, count: n))
                }
                return
            }
        }
        half.pending.insert(piece, at: index)
        half.bufferedBytes += piece.bytes.count
        totalBuffered += piece.bytes.count
        conn[side] = half
        if half.bufferedBytes > limits.maxBufferedBytesPerDirection || totalBuffered > limits.maxBufferedBytesTotal {
            flushPending(side: side, conn: &conn, reason: .bufferLimit, into: &events)
        }
    }

    /// Delivers held segments that have become in order.
    private mutating func drain(side: FlowSide, conn: inout Connection, into events: inout [ReassemblyEvent]) {
        while let first = conn[side].pending.first, let next = conn[side].nextSequence,
              SequenceNumber.distance(from: next, to: first.sequence) <= 0, !conn[side].finished {
            conn[side].pending.removeFirst()
            conn[side].bufferedBytes -= first.bytes.count
            totalBuffered -= first.bytes.count
            deliver(first, side: side, conn: &conn, into: &events)
        }
    }

    /// Gives up every hole in one direction: each becomes a gap and the held data is delivered.
    private mutating func flushPending(side: FlowSide, conn: inout Connection, reason: GapReason, into events: inout [ReassemblyEvent]) {
        while let first = conn[side].pending.first {
            if conn[side].finished {
                // Data beyond a FIN cannot belong to the stream.
                totalBuffered -= conn[side].bufferedBytes
                conn[side].pending.removeAll()
                conn[side].bufferedBytes = 0
                return
            }
            if let next = conn[side].nextSequence {
                let hole = SequenceNumber.distance(from: next, to: first.sequence)
                if hole > 0 {
                    if reason == .bufferLimit { droppedByLimits += hole }
                    events.append(.gap(stream: conn.stream, side: side, count: hole, reason: reason == .bufferLimit ? .bufferLimit : .lostSegment))
                    conn[side].nextSequence = first.sequence
                }
            }
            drain(side: side, conn: &conn, into: &events)
        }
    }
}
