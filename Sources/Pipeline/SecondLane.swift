import Dissection
import Synchronization

/// The second lane, on the reading thread: which lane each connection is in (tagged on each
/// event as it is read), lane 1's dissectors (a `StreamStage` of its own) and renderer, and the
/// bytes it renders, into chunks handed to the caller's thread (`chunks`).
// Unchecked: its state is the reading thread's; the caller's thread reaches it only through the
// atomics, locks and round trips it holds.
final class SecondLane: @unchecked Sendable {
    let stage: StreamStage
    let chunks = LaneChunks()
    let handoff = StreamHandoff()
    private let stopRequested = Atomic<Bool>(false)
    private let render: LaneRenderer
    /// At the end of each batch the lane dissected: what it still has to write of the
    /// connections leaving it (`LaneBatchEnd`).
    private let batchEnd: LaneBatchEnd?
    // The reading thread's alone.
    /// The lane of each open connection, by stream number.
    @exclusivity(unchecked) private var laneOf = StreamTable<UInt8>()
    /// Connections that come to lane 1 after the last batch: taken over before the next one.
    @exclusivity(unchecked) private var arriving: [Int] = []
    /// The chunk being rendered into.
    @exclusivity(unchecked) private var chunk: LaneChunk?
    /// Moves asked for by the caller's thread, made from the next batch read on.
    private let requests = Mutex<[LaneMigration]>([])
    private let hasRequests = Atomic<Bool>(false)
    /// Nanoseconds the reading thread has spent dissecting lane 1 so far: the share of its time
    /// that moving lane 1's connections can take off it (the rest is reading).
    private let dissectingNanoseconds = Atomic<UInt64>(0)
    /// Of every `LaneBalancer.shareUnits` connections that open, how many start in lane 1: set
    /// by the caller's thread (`LaneBalancer.newConnectionShare`), read as connections open.
    private let newConnectionShare = Atomic<Int>(LaneBalancer.shareUnits / 2)
    /// The reading thread's running count of lane 1's due (one connection each `shareUnits`);
    /// from half, so that the first connection starts in lane 1.
    @exclusivity(unchecked) private var shareCredit = LaneBalancer.shareUnits / 2

    /// Caller's thread: how long the lane has spent dissecting so far.
    var dissected: UInt64 { dissectingNanoseconds.load(ordering: .relaxed) }

    init(stage: StreamStage, render: @escaping LaneRenderer, batchEnd: LaneBatchEnd? = nil) {
        self.stage = stage
        self.render = render
        self.batchEnd = batchEnd
    }

    var stopped: Bool { stopRequested.load(ordering: .relaxed) }

    /// Caller's thread: the run was stopped; the lane only ends its batches from now on.
    func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        handoff.wakeTakers()
    }

    /// Caller's thread: asks for a connection to change lanes.
    func request(_ move: LaneMigration) {
        requests.withLock { $0.append(move) }
        hasRequests.store(true, ordering: .releasing)
    }

    /// Reading thread, a batch about to be filled: the moves asked for go with it (they take
    /// effect after it).
    func start(_ batch: Batch) {
        guard hasRequests.load(ordering: .acquiring) else { return }
        hasRequests.store(false, ordering: .relaxed)
        let moves = requests.withLock { moves in
            defer { moves.removeAll() }
            return moves
        }
        // Each move goes with the batch, even one that changes nothing (a connection closed
        // since: the lanes then hand over nothing), so the caller's thread sees its request
        // answered.
        batch.migrations += moves
    }

    /// Caller's thread: how many of every `LaneBalancer.shareUnits` connections that open from
    /// now on start in lane 1.
    func setNewConnectionShare(_ share: Int) {
        newConnectionShare.store(share, ordering: .relaxed)
    }

    /// Reading thread: tags the batch's events from `start` on with their lanes. Connections
    /// start in lane 1 in the share the balancer last set (half at first: every other one, the
    /// first in lane 1), in lane 0 otherwise; the balancer moves one if need be. A closed
    /// connection is forgotten.
    func tag(_ batch: Batch, from start: Int) {
        for i in start..<batch.events.count {
            let stream = batch.events[i].stream
            let lane: UInt8
            if let known = laneOf[stream] {
                lane = known
            } else {
                shareCredit += newConnectionShare.load(ordering: .relaxed)
                if shareCredit >= LaneBalancer.shareUnits {
                    shareCredit -= LaneBalancer.shareUnits
                    lane = 1
                } else {
                    lane = 0
                }
                laneOf[stream] = lane
            }
            if case .closed = batch.events[i] { laneOf[stream] = nil }
            batch.lanes.append(lane)
        }
    }

    /// Reading thread, the batch filled: lane 1's events dissected into chunks, then the
    /// batch's end; connections moving out of lane 1 are handed over, and from the next batch
    /// on the batch's moves are in the tags.
    func finish(_ batch: Batch) {
        if !stopped {
            // Taken once the caller's thread is done with the batch before this one.
            for stream in arriving {
                if let state = handoff.take(stream, lane: 1, unlessStopped: self) { stage.adoptStream(stream, state) }
            }
            // Waiting for a free chunk (the caller's thread behind) is not dissecting: it is
            // counted as the reading thread's wait already.
            let start = monotonicNanoseconds(), waitedBefore = chunks.waited().producer
            dissect(batch)
            if let batchEnd {
                let leaving = batch.migrations.filter { $0.to == 0 }.map(\.stream)
                if !leaving.isEmpty || batch.isLast {
                    let chunk = self.chunk ?? take()
                    batchEnd(leaving, batch.isLast, &chunk.bytes)
                }
            }
            let spent = (monotonicNanoseconds() &- start) &- (chunks.waited().producer &- waitedBefore)
            // Written by this thread alone: a load and a store, no read-modify-write.
            dissectingNanoseconds.store(dissected &+ spent, ordering: .relaxed)
        }
        arriving.removeAll()
        handOver(.batchEnd)
        for move in batch.migrations {
            if move.to == 0 {
                if !stopped { handoff.give(move.stream, stage.removeStream(move.stream), to: 0) }
            } else {
                arriving.append(move.stream)
            }
            if laneOf[move.stream] != nil { laneOf[move.stream] = move.to }
        }
    }

    private func dissect(_ batch: Batch) {
        let events = batch.events
        let lanes = batch.lanes
        batch.forEachEvent({ i, frame, time in
            guard lanes[i] == 1 else { return true }
            stage.handle(events[i...i], frame: frame, time: time) { event in
                let chunk = self.chunk ?? take()
                render(event, &chunk.bytes)
                if chunk.bytes.bytes.count >= LaneChunks.chunkBytes { handOver(.piece) }
                return true
            }
            let chunk = self.chunk ?? take()
            chunk.records.append((chunk.bytes.bytes.count, .eventEnd))
            return !stopped
        }, note: { _ in !stopped })
    }

    /// A free chunk to render into (waiting for one).
    private func take() -> LaneChunk {
        let chunk = chunks.nextFree()
        self.chunk = chunk
        return chunk
    }

    /// Ends the chunk's last record here, as `kind`, and hands the chunk over.
    private func handOver(_ kind: LaneChunk.Kind) {
        let chunk = self.chunk ?? take()
        chunk.records.append((chunk.bytes.bytes.count, kind))
        chunks.hand(chunk)
        self.chunk = nil
    }
}
