/// The caller's thread's view of the balance between the two threads, in windows of batches:
/// how long each waited for the other, and the bytes each connection rendered. When one thread
/// waited much longer than the other, the connection of the busier lane whose share of the
/// busier thread's time is nearest half the difference is asked to move.
///
/// A connection's share of its thread's time is taken from its share of its lane's bytes. On
/// the caller's thread the lane's bytes stand for the whole window; on the reading thread only
/// for the time it spent dissecting, the rest being reading, which no move takes away. So when
/// one busy connection is left in lane 1 (the end of a capture, where one subscriber drains
/// its backlog), it moves to the caller's thread, and the reading thread is left to read.
struct LaneBalancer {
    enum Policy {
        /// By the threads' waits, as above.
        case byWaits
        /// After every `batches` batches, the connection that rendered the most bytes in them
        /// moves to the other lane, whatever the waits: a test's way to move connections often.
        case everyWindow(batches: Int)
    }

    /// Batches per window.
    static let windowBatches = 32
    /// Waits that differ by less than this share of the window are left as they are.
    static let tolerance = 0.1

    private let policy: Policy
    /// Bytes each connection rendered in the window, and its lane (a lane's bytes are their sum).
    private var recent: [Int: (bytes: Int, lane: UInt8)] = [:]
    private var batches = 0
    private var windowStart = monotonicNanoseconds()
    private var waitedBefore: (reader: UInt64, dissector: UInt64) = (0, 0)
    private var laneOneDissectedBefore: UInt64 = 0
    /// A move asked for and not yet seen in a batch: no other is asked for until then.
    private var waitingForMove = false
    /// Of every `shareUnits` connections that open, how many start in lane 1 (`SecondLane.tag`).
    /// Moving a connection balances lanes of a few long connections; a fleet's connections are
    /// over in a second or two (a move of one changes nothing), so each window also shifts the
    /// share of new ones towards the thread that waited longer.
    private(set) var newConnectionShare = LaneBalancer.shareUnits / 2
    static let shareUnits = 64

    init(policy: Policy = .byWaits) {
        self.policy = policy
    }

    mutating func add(_ count: Int, stream: Int, lane: UInt8) {
        guard count > 0 else { return }
        // A window that sees a move ends with it, so a connection keeps its lane in a window.
        recent[stream, default: (0, lane)].bytes += count
    }

    /// After each batch: at the end of a window, the move to ask for, if any. `waited` is the
    /// time each thread has waited for the other so far: the reading thread for a free batch
    /// or chunk (lane 0 behind), the caller's for a batch or lane 1's bytes. `laneOneDissected`
    /// is the time the reading thread has spent dissecting lane 1 so far.
    mutating func batchDone(_ batch: Batch, waited: (reader: UInt64, dissector: UInt64),
                            laneOneDissected: UInt64) -> LaneMigration? {
        if !batch.migrations.isEmpty {
            // The window that saw a move is not judged: it is partly before, partly after.
            waitingForMove = false
            restart(waited: waited, laneOneDissected: laneOneDissected)
            return nil
        }
        batches += 1
        if case .everyWindow(let count) = policy {
            guard batches >= count else { return nil }
            defer { restart(waited: waited, laneOneDissected: laneOneDissected) }
            guard !waitingForMove, let busiest = recent.max(by: { $0.value.bytes < $1.value.bytes }) else { return nil }
            waitingForMove = true
            return LaneMigration(stream: busiest.key, to: busiest.value.lane == 0 ? 1 : 0)
        }
        guard batches >= Self.windowBatches else { return nil }
        defer { restart(waited: waited, laneOneDissected: laneOneDissected) }
        let window = Double(monotonicNanoseconds() &- windowStart)
        let readerWaited = Double(waited.reader &- waitedBefore.reader)
        let dissectorWaited = Double(waited.dissector &- waitedBefore.dissector)
        // The reading thread waiting longer: lane 0 is the busier; else lane 1.
        let share = (readerWaited - dissectorWaited) / window
        // New connections, in proportion to the difference (half of it in shares of 64 a window),
        // a move asked for or not.
        let shift = Int((share * Double(Self.shareUnits) / 2).rounded())
        newConnectionShare = min(max(newConnectionShare + shift, 0), Self.shareUnits)
        guard !waitingForMove else { return nil }
        guard abs(share) > Self.tolerance else { return nil }
        let from: UInt8 = share > 0 ? 0 : 1
        let laneBytes = recent.values.reduce(0) { $0 + ($1.lane == from ? $1.bytes : 0) }
        // The share of the busier thread's window its lane's bytes stand for.
        var laneShare = 1.0
        if from == 1 {
            laneShare = min(max(Double(laneOneDissected &- laneOneDissectedBefore) / window, 0.05), 1)
        }
        // In bytes of the lane: half the difference of the threads' busy shares.
        let target = abs(share) / 2 / laneShare * Double(laneBytes)
        var best: (stream: Int, distance: Double)?
        for (stream, seen) in recent where seen.lane == from {
            let distance = abs(Double(seen.bytes) - target)
            // Only a move that leaves the lanes nearer balance than they are.
            if distance < target, distance < best?.distance ?? .infinity { best = (stream, distance) }
        }
        guard let best else { return nil }
        waitingForMove = true
        return LaneMigration(stream: best.stream, to: from == 0 ? 1 : 0)
    }

    private mutating func restart(waited: (reader: UInt64, dissector: UInt64), laneOneDissected: UInt64) {
        recent.removeAll(keepingCapacity: true)
        batches = 0
        windowStart = monotonicNanoseconds()
        waitedBefore = waited
        laneOneDissectedBefore = laneOneDissected
    }
}
