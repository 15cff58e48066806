import Capture
import Dissection
import Reassembly
import Synchronization

/// Renders one event into the bytes given.
public typealias LaneRenderer = (OutputEvent, inout ByteSink) -> Void

/// A connection changing lanes: after the batch that carries it, lane `to` dissects it.
struct LaneMigration {
    let stream: Int
    let to: UInt8
}

extension Pipeline {
    /// Batches in flight in a run in lanes: more than `batchesInFlight`, so that when the
    /// caller's lane is the busier for a while, the reading thread (whose lane dissects a batch
    /// after reading it) can read ahead instead of waiting. Bench capture, text, best and median
    /// of 10 runs taken in turn: 4 batches 0.50 and 0.51 s, 16 batches 0.45 and 0.47 s (32: no
    /// better); peak 26.4 -> 29.5 MB with 64 chunks, 27.7 MB with 32.
    static let batchesInFlightInLanes = 16

    /// Like `runConcurrently`, with the dissecting shared between the two threads: the
    /// connections are dealt to two lanes. Lane 1 is dissected on the reading thread, a batch at
    /// a time once the batch is handed over, and rendered there by `secondLane` into bytes of its
    /// own; lane 0 is dissected on the caller's thread and rendered by `render` straight into
    /// `sink`, where lane 1's bytes are copied in their place as they come. `sink` gets the same bytes, in the
    /// same order, as one renderer would write from `runConcurrently`, for renderers whose output
    /// for an event depends on that event alone (text and JSON; not a table, which sums every
    /// connection). After each event of lane 0, and after each piece of lane 1's bytes copied
    /// in (what one reassembly event rendered, or up to a chunk of it), `eventDone` may write
    /// `sink` out and empty it; returning false stops the run there, as `emit` returning false
    /// does (lane 1's bytes arrive rendered, so a stop falls between pieces, not between PDUs).
    ///
    /// Each connection is dissected by one lane at a time. Connections are dealt out as they
    /// open; when one thread keeps waiting for the other, a connection that rendered about the
    /// difference lately moves to the other lane, its dissector handed over whole between two
    /// batches. Lane 1's bytes come back in a fixed number of chunks (`LaneChunks`), so memory
    /// stays flat however far the reading thread runs ahead. With `maxPDUs` set, this is `run`.
    public func runInLanes<S: PacketSource>(_ source: inout S, into sink: inout ByteSink,
                                            render: LaneRenderer, secondLane: @escaping LaneRenderer,
                                            eventDone: (inout ByteSink) -> Bool) throws {
        try runInLanes(&source, into: &sink, render: render, secondLane: secondLane, balancing: .byWaits, eventDone: eventDone)
    }

    /// `runInLanes`, with the connections moved as `balancing` says (tests move them often).
    func runInLanes<S: PacketSource>(_ source: inout S, into sink: inout ByteSink,
                                     render: LaneRenderer, secondLane: @escaping LaneRenderer,
                                     balancing: LaneBalancer.Policy, eventDone: (inout ByteSink) -> Bool) throws {
        guard options.maxPDUs == nil else {
            return try run(&source) { event in
                render(event, &sink)
                return eventDone(&sink)
            }
        }
        let queues = BatchQueues(count: batchesInFlightInLanes)
        let lane = SecondLane(stage: StreamStage(registry: registry, maxPDUs: nil), render: secondLane)
        var failure: Error?
        try withUnsafeMutablePointer(to: &source) { pointer in
            let reading = SourcePointer(pointer)
            guard let reader = WorkerThread({ failure = self.readAll(reading.pointer, into: queues, lanes: lane) }) else {
                return try run(&pointer.pointee) { event in
                    render(event, &sink)
                    return eventDone(&sink)
                }
            }
            laneStage = lane.stage
            var balancer = LaneBalancer(policy: balancing)
            while true {
                let batch = queues.nextFilled()
                if !stage.stopped {
                    dissect(batch, lane: lane, balancer: &balancer, into: &sink, render: render, eventDone: eventDone)
                    if stage.stopped {
                        queues.stop()
                        lane.stop()
                    }
                }
                // What the lane still has of this batch: nothing but its end, unless stopped.
                while lane.chunks.pop({ _ in }) != .batchEnd {}
                if !stage.stopped {
                    // Connections leaving lane 0 are handed over; those coming were handed
                    // over before the batch was.
                    laneMoves += batch.migrations.count
                    for move in batch.migrations {
                        if move.to == 1 {
                            lane.handoff.give(move.stream, stage.removeStream(move.stream), to: 1)
                        } else if let state = lane.handoff.take(move.stream, lane: 0, unlessStopped: lane) {
                            stage.adoptStream(move.stream, state)
                        }
                    }
                    var waited = queues.waited()
                    let chunksWaited = lane.chunks.waited()
                    waited.reader &+= chunksWaited.producer
                    waited.dissector &+= chunksWaited.consumer
                    if let move = balancer.batchDone(batch, waited: waited) {
                        lane.request(move)
                    }
                }
                let last = batch.isLast
                queues.giveBack(batch)
                if last { break }
            }
            reader.join()
        }
        if let failure { throw failure }
    }

    /// Lane 0's part of a batch, on the caller's thread: its events dissected here, lane 1's
    /// copied from its chunks, all in order.
    private func dissect(_ batch: Batch, lane: SecondLane, balancer: inout LaneBalancer, into sink: inout ByteSink,
                         render: LaneRenderer, eventDone: (inout ByteSink) -> Bool) {
        var start = 0
        let events = batch.events
        let lanes = batch.lanes
        for item in batch.items {
            switch item {
            case .events(let frame, let time, let end), .finish(let frame, let time, let end):
                for i in start..<end {
                    let stream = events[i].stream
                    if lanes[i] == 0 {
                        var written = 0
                        stage.handle(events[i...i], frame: frame, time: time) { event in
                            let before = sink.bytes.count
                            render(event, &sink)
                            written += sink.bytes.count - before
                            return eventDone(&sink)
                        }
                        balancer.add(written, stream: stream, lane: 0)
                    } else {
                        balancer.add(copyLaneEvent(from: lane.chunks, into: &sink, eventDone: eventDone), stream: stream, lane: 1)
                    }
                    if stage.stopped { return }
                }
                start = end
            case .note(let note):
                stage.send(note) { event in
                    render(event, &sink)
                    return eventDone(&sink)
                }
            }
            if stage.stopped { return }
        }
    }

    /// Appends the bytes the second lane made of its next event; returns how many.
    private func copyLaneEvent(from chunks: LaneChunks, into sink: inout ByteSink, eventDone: (inout ByteSink) -> Bool) -> Int {
        var count = 0
        while true {
            let kind = chunks.pop { bytes in
                count += bytes.count
                guard !stage.stopped else { return }
                sink.append(bytes: bytes)
                // After each piece: the sink is written out as it fills, however long the event.
                if !eventDone(&sink) { stage.stopped = true }
            }
            if kind == .eventEnd { break }
            precondition(kind == .piece, "the second lane ended its batch before an event of it")
        }
        return count
    }
}

/// The second lane, on the reading thread: which lane each connection is in (tagged on each
/// event as it is read), lane 1's dissectors (a `StreamStage` of its own) and renderer, and the
/// bytes it renders, into chunks handed to the caller's thread (`chunks`).
final class SecondLane: @unchecked Sendable {
    let stage: StreamStage
    let chunks = LaneChunks()
    let handoff = StreamHandoff()
    private let stopRequested = Atomic<Bool>(false)
    private let render: LaneRenderer
    // The reading thread's alone.
    /// The lane of each open connection, by stream number.
    @exclusivity(unchecked) private var laneOf: [Int: UInt8] = [:]
    /// Connections that come to lane 1 after the last batch: taken over before the next one.
    @exclusivity(unchecked) private var arriving: [Int] = []
    /// The chunk being rendered into.
    @exclusivity(unchecked) private var chunk: LaneChunk?
    /// Moves asked for by the caller's thread, made from the next batch read on.
    private let requests = Mutex<[LaneMigration]>([])
    private let hasRequests = Atomic<Bool>(false)

    init(stage: StreamStage, render: @escaping LaneRenderer) {
        self.stage = stage
        self.render = render
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

    /// Reading thread: tags the batch's events from `start` on with their lanes. A connection
    /// starts in the lane its number's parity says; the balancer moves it if need be. A closed
    /// connection is forgotten.
    func tag(_ batch: Batch, from start: Int) {
        for i in start..<batch.events.count {
            let stream = batch.events[i].stream
            let lane: UInt8
            if let known = laneOf[stream] {
                lane = known
            } else {
                lane = UInt8(stream & 1)
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
            dissect(batch)
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
        var start = 0
        let events = batch.events
        let lanes = batch.lanes
        for item in batch.items {
            switch item {
            case .events(let frame, let time, let end), .finish(let frame, let time, let end):
                for i in start..<end where lanes[i] == 1 {
                    stage.handle(events[i...i], frame: frame, time: time) { event in
                        let chunk = self.chunk ?? take()
                        render(event, &chunk.bytes)
                        if chunk.bytes.bytes.count >= LaneChunks.chunkBytes { handOver(.piece) }
                        return true
                    }
                    let chunk = self.chunk ?? take()
                    chunk.records.append((chunk.bytes.bytes.count, .eventEnd))
                }
                start = end
            case .note:
                break
            }
            if stopped { return }
        }
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

/// Connections' states on their way from one lane to the other.
final class StreamHandoff: @unchecked Sendable {
    private final class Parcel {
        let state: StreamStage.StreamState?
        init(_ state: StreamStage.StreamState?) { self.state = state }
    }

    private let parcels = Mutex<[Int: Parcel]>([:])
    /// Where each lane's thread waits for a state given to it: one each, as a `Parking` has one
    /// sleeper at most (both threads can wait for a state at once when a batch moves
    /// connections both ways).
    private let parkings = [Parking(), Parking()]
    /// Bumped at each give and at a stop, for the takers' waits.
    private let changes = Atomic<Int>(0)

    /// The giving lane, once it is done with the batch after which `stream` moves to `lane`.
    func give(_ stream: Int, _ state: StreamStage.StreamState?, to lane: UInt8) {
        let parcel = Parcel(state)
        parcels.withLock { $0[stream] = parcel }
        changes.add(1, ordering: .sequentiallyConsistent)
        parkings[Int(lane)].wake()
    }

    /// The run was stopped: takers stop waiting.
    func wakeTakers() {
        changes.add(1, ordering: .sequentiallyConsistent)
        for parking in parkings { parking.wake() }
    }

    /// Lane `lane`'s thread: the state given for `stream`, waiting for it (nil if there was
    /// none, or once `second` is stopped).
    func take(_ stream: Int, lane: UInt8, unlessStopped second: SecondLane) -> StreamStage.StreamState? {
        while true {
            let seen = changes.load(ordering: .sequentiallyConsistent)
            if let parcel = parcels.withLock({ $0.removeValue(forKey: stream) }) { return parcel.state }
            if second.stopped { return nil }
            parkings[Int(lane)].wait { changes.load(ordering: .sequentiallyConsistent) != seen }
        }
    }
}

/// The caller's thread's view of the balance between the two threads, in windows of batches:
/// how long each waited for the other, and the bytes each connection rendered. When one thread
/// waited much longer than the other, the connection of the busier lane whose bytes are
/// nearest half the difference is asked to move.
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
    /// Bytes each connection rendered in the window, and its lane; what both lanes rendered.
    private var recent: [Int: (bytes: Int, lane: UInt8)] = [:]
    private var laneBytes = (0, 0)
    private var batches = 0
    private var windowStart = monotonicNanoseconds()
    private var waitedBefore: (reader: UInt64, dissector: UInt64) = (0, 0)
    /// A move asked for and not yet seen in a batch: no other is asked for until then.
    private var waitingForMove = false

    init(policy: Policy = .byWaits) {
        self.policy = policy
    }

    mutating func add(_ count: Int, stream: Int, lane: UInt8) {
        guard count > 0 else { return }
        if lane == 0 { laneBytes.0 += count } else { laneBytes.1 += count }
        // A window that sees a move ends with it, so a connection keeps its lane in a window.
        recent[stream, default: (0, lane)].bytes += count
    }

    /// After each batch: at the end of a window, the move to ask for, if any. `waited` is the
    /// time each thread has waited for the other so far: the reading thread for a free batch
    /// or chunk (lane 0 behind), the caller's for a batch or lane 1's bytes.
    mutating func batchDone(_ batch: Batch, waited: (reader: UInt64, dissector: UInt64)) -> LaneMigration? {
        if !batch.migrations.isEmpty {
            // The window that saw a move is not judged: it is partly before, partly after.
            waitingForMove = false
            restart(waited: waited)
            return nil
        }
        batches += 1
        if case .everyWindow(let count) = policy {
            guard batches >= count else { return nil }
            defer { restart(waited: waited) }
            guard !waitingForMove, let busiest = recent.max(by: { $0.value.bytes < $1.value.bytes }) else { return nil }
            waitingForMove = true
            return LaneMigration(stream: busiest.key, to: busiest.value.lane == 0 ? 1 : 0)
        }
        guard batches >= Self.windowBatches else { return nil }
        defer { restart(waited: waited) }
        guard !waitingForMove else { return nil }
        let window = Double(monotonicNanoseconds() &- windowStart)
        let readerWaited = Double(waited.reader &- waitedBefore.reader)
        let dissectorWaited = Double(waited.dissector &- waitedBefore.dissector)
        // The reading thread waiting longer: lane 0 is the busier; else lane 1.
        let share = (readerWaited - dissectorWaited) / window
        guard abs(share) > Self.tolerance else { return nil }
        let from: UInt8 = share > 0 ? 0 : 1
        let target = abs(share) / 2 * Double(from == 0 ? laneBytes.0 : laneBytes.1)
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

    private mutating func restart(waited: (reader: UInt64, dissector: UInt64)) {
        recent.removeAll(keepingCapacity: true)
        laneBytes = (0, 0)
        batches = 0
        windowStart = monotonicNanoseconds()
        waitedBefore = waited
    }
}
