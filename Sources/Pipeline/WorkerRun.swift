#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Capture
import Dissection
import Reassembly
import Synchronization

extension Pipeline {
    /// Batches in flight in a run in workers: one being read into, the others being dissected
    /// or waiting, so the reading thread can read ahead while a worker is the busier for a while
    /// (6 of up to 256 KB: see `batchPackets`; 8 held 2 MB more at the bench's peak for no time
    /// gained, 4 made the fleet 7% slower: docs/performance.md).
    static let batchesInFlightInWorkers = 6

    /// Reads `source` on a thread of its own and shares the connections out among `workers`
    /// workers, each owning whole connections (by a hash of the connection's number,
    /// `Batch.worker(of:among:)`): its dissectors, their state, and the rendering of their events
    /// with a renderer of its own. Worker 0 is the caller's thread, which renders straight into
    /// `sink` and copies the other workers' bytes in their place, so `sink` gets the bytes one
    /// renderer writes in `run`, in the same order, whatever the number of workers. After each
    /// event of worker 0, and after each piece of another worker's bytes copied in, `eventDone`
    /// may write `sink` out and empty it; returning false stops the run there.
    ///
    /// What the renderers sum (a table) is merged at the end: `renderer` takes in each other
    /// worker's (`EventRenderer.merge`), and every renderer is told the place in the run of the
    /// events it is given (`setPosition`), so what it keeps first is what one renderer would.
    /// Memory stays flat: a fixed number of batches and, per worker, of chunks of rendered bytes.
    /// `analysis`, when given, is handed the events it reads of every connection, in capture
    /// order, on this thread (`SpanningAnalysis`); a worker forwards them with its bytes.
    ///
    /// With one worker, `maxPDUs` set (which needs the reading to stop exactly where the last PDU
    /// was made), or no thread to be had, this is `run`: the same stages on one thread.
    public func runInWorkers<S: PacketSource, R: EventRenderer>(_ source: inout S, workers: Int, renderer: inout R,
                                                               makeRenderer: () -> R, analysis: SpanningAnalysis? = nil,
                                                               into sink: inout ByteSink,
                                                               eventDone: (inout ByteSink) -> Bool) throws {
        let count = min(max(workers, 1), Int(UInt8.max))
        guard count > 1, options.maxPDUs == nil else {
            return try run(&source) { event in
                analysis?.observeIfRead(event)
                renderer.render(event, into: &sink)
                return eventDone(&sink)
            }
        }
        let ring = BatchRing(batches: batchesInFlightInWorkers)
        // The chunks of rendered bytes are shared out among the other workers (at least 4 each),
        // so their memory stays about one worker's however many there are.
        let chunksEach = max(4, RenderedChunks.count / (count - 1))
        let others = (1..<count).map { _ in
            Worker(stage: StreamStage(registry: registry, maxPDUs: nil, countedPDUs: options.countedPDUs), renderer: makeRenderer(),
                   analysis: analysis, chunks: chunksEach)
        }
        var failure: Error?
        try withUnsafeMutablePointer(to: &source) { pointer in
            let reading = SourcePointer(pointer)
            var threads: [WorkerThread] = []
            for (i, worker) in others.enumerated() {
                let number = UInt8(i + 1)
                guard let thread = WorkerThread({ worker.run(number, ring: ring) }) else { break }
                threads.append(thread)
            }
            guard threads.count == others.count,
                  let reader = WorkerThread({ failure = self.readAll(reading.pointer, into: ring, workers: count) }) else {
                // Workers started are told there is no more to come.
                ring.abandon()
                for thread in threads { thread.join() }
                return try run(&pointer.pointee) { event in
                    analysis?.observeIfRead(event)
                    renderer.render(event, into: &sink)
                    return eventDone(&sink)
                }
            }
            workerStages = others.map(\.stage)
            var number = 0
            while true {
                let batch = ring.filled(number)
                number += 1
                if !stage.stopped {
                    dissect(batch, others: others, renderer: &renderer, analysis: analysis, into: &sink, eventDone: eventDone)
                }
                // What the other workers still have of this batch: the rest of it, when stopped.
                for worker in others {
                    copy(from: worker.chunks, through: .batchEnd, analysis: analysis, into: &sink, eventDone: eventDone)
                }
                if stage.stopped, !ring.isStopped {
                    ring.stop()
                    for worker in others { worker.stop() }
                }
                let last = batch.isLast
                ring.giveBack()
                if last { break }
            }
            reader.join()
            for thread in threads { thread.join() }
        }
        for worker in others { renderer.merge(worker.renderer) }
        if let failure { throw failure }
    }

    /// Worker 0's part of a batch, on the caller's thread: its events dissected and rendered
    /// here, the other workers' copied from their chunks, all in order; notes rendered here.
    private func dissect<R: EventRenderer>(_ batch: Batch, others: [Worker<R>], renderer: inout R, analysis: SpanningAnalysis?,
                                           into sink: inout ByteSink, eventDone: (inout ByteSink) -> Bool) {
        let events = batch.events
        let workers = batch.workers
        let first = batch.firstOrdinal
        batch.forEachEvent({ i, frame, time in
            let worker = Int(workers[i])
            if worker == 0 {
                renderer.setPosition(2 * (first + i) + 1)
                stage.handle(events[i...i], frame: frame, time: time) { event in
                    analysis?.observeIfRead(event)
                    renderer.render(event, into: &sink)
                    return eventDone(&sink)
                }
            } else {
                copy(from: others[worker - 1].chunks, through: .eventEnd, analysis: analysis, into: &sink, eventDone: eventDone)
            }
            return !stage.stopped
        }, note: { note, next in
            // A note comes before the event after it: its place is just before that event's.
            renderer.setPosition(2 * (first + next))
            stage.send(note) { event in
                analysis?.observeIfRead(event)
                renderer.render(event, into: &sink)
                return eventDone(&sink)
            }
            return !stage.stopped
        })
    }

    /// Appends another worker's bytes up to the end of its next event (`end` is `.eventEnd`) or
    /// of its batch (`.batchEnd`), and hands `analysis` the events it forwarded with them;
    /// nothing more once the run is stopped.
    private func copy(from chunks: RenderedChunks, through end: RenderedChunk.Kind, analysis: SpanningAnalysis?,
                      into sink: inout ByteSink, eventDone: (inout ByteSink) -> Bool) {
        while true {
            let kind = chunks.pop({ bytes in
                guard !stage.stopped else { return }
                sink.append(bytes: bytes)
                // After each piece: the sink is written out as it fills, however long the event.
                if !eventDone(&sink) { stage.stopped = true }
            }, forwarded: { event in
                if !stage.stopped { analysis?.observe(event) }
            })
            if kind == end { return }
            precondition(kind != .batchEnd, "a worker ended its batch before an event of it")
        }
    }
}

/// A worker other than the caller's thread: its connections' dissectors (a `StreamStage`), its
/// renderer, and the bytes it renders, in chunks handed to the caller's thread (`chunks`).
// Unchecked: its stage, renderer and chunk are its thread's alone until that thread is joined;
// the caller's thread reaches it meanwhile only through `chunks` (a `RoundTrip`) and the atomic
// (the analysis is Sendable).
final class Worker<R: EventRenderer>: @unchecked Sendable {
    let stage: StreamStage
    let chunks: RenderedChunks
    // The worker's thread renders with it; the caller's thread merges it only after joining that thread.
    @exclusivity(unchecked) var renderer: R
    /// The chunk being rendered into.
    // Only the worker's thread touches it (`dissect`, `take`, `handOver`), with plain loads and stores.
    @exclusivity(unchecked) private var chunk: RenderedChunk?
    private let stopRequested = Atomic<Bool>(false)
    /// The run's spanning analysis, whose `reads` the worker asks of its events.
    private let analysis: SpanningAnalysis?

    /// `chunks`: how many chunks of rendered bytes go round between it and the caller's thread.
    init(stage: StreamStage, renderer: R, analysis: SpanningAnalysis?, chunks: Int) {
        self.chunks = RenderedChunks(count: chunks)
        self.stage = stage
        self.renderer = renderer
        self.analysis = analysis
    }

    /// Caller's thread: the run was stopped; the worker only ends its batches from now on.
    func stop() { stopRequested.store(true, ordering: .relaxed) }
    private var stopped: Bool { stopRequested.load(ordering: .relaxed) }

    /// The worker's thread: every batch, in order, to the last. Each of its events is rendered
    /// into the chunks and ended (`eventEnd`), each batch ended (`batchEnd`).
    func run(_ number: UInt8, ring: BatchRing) {
        var next = 0
        while true {
            guard let batch = ring.filledOrAbandoned(next) else { return }
            next += 1
            if !stopped { dissect(batch, number) }
            // Read before the batch's end is handed over: from then on, the batch may be given
            // back and filled anew.
            let last = batch.isLast
            handOver(.batchEnd)
            if last { return }
        }
    }

    private func dissect(_ batch: Batch, _ number: UInt8) {
        let events = batch.events
        let workers = batch.workers
        let first = batch.firstOrdinal
        batch.forEachEvent({ i, frame, time in
            guard workers[i] == number else { return true }
            renderer.setPosition(2 * (first + i) + 1)
            stage.handle(events[i...i], frame: frame, time: time) { event in
                let chunk = self.chunk ?? take()
                // Forwarded with the record that ends after it: the next one made in this chunk.
                // Through an optional chain: `if let analysis` retained and released it per event,
                // on an object the caller's thread reads too.
                if let kept = analysis?.forwarded(event) { chunk.forwarded.append((chunk.records.count, kept)) }
                renderer.render(event, into: &chunk.bytes)
                if chunk.bytes.bytes.count >= RenderedChunks.chunkBytes { handOver(.piece) }
                return true
            }
            let chunk = self.chunk ?? take()
            chunk.records.append((chunk.bytes.bytes.count, .eventEnd))
            return !stopped
        }, note: { _, _ in !stopped })
    }

    /// A free chunk to render into (waiting for one).
    private func take() -> RenderedChunk {
        let chunk = chunks.nextFree()
        self.chunk = chunk
        return chunk
    }

    /// Ends the chunk's last record here, as `kind`, and hands the chunk over.
    private func handOver(_ kind: RenderedChunk.Kind) {
        let chunk = self.chunk ?? take()
        chunk.records.append((chunk.bytes.bytes.count, kind))
        chunks.hand(chunk)
        self.chunk = nil
    }
}

/// The batches of a run in workers, going round: the reading thread fills them in turn, every
/// worker (the caller's thread included) reads each one, and the caller's thread gives a batch
/// back once every worker has ended it. A fixed number, so the reading thread waits when it is
/// that far ahead.
// Unchecked: its counters are read and written under its lock only; a batch is written by the
// reading thread alone before it is handed over, and read by the others after.
final class BatchRing: BatchHandOver, @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let toReader = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let toWorkers = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let batches: [Batch]
    // Under `lock`.
    /// Batches handed over so far, and given back so far.
    private var handed = 0
    private var givenBack = 0
    private var stopped = false
    /// No batch will come (the run fell back to one thread before reading).
    private var abandoned = false

    init(batches count: Int) {
        batches = (0..<count).map { _ in Batch() }
        pthread_mutex_init(lock, nil)
        pthread_cond_init(toReader, nil)
        pthread_cond_init(toWorkers, nil)
    }

    deinit {
        pthread_cond_destroy(toWorkers)
        pthread_cond_destroy(toReader)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        toReader.deallocate()
        toWorkers.deallocate()
    }

    /// Reading thread: the next batch to fill, emptied (waiting while every batch is in use).
    func nextEmpty() -> (Batch, stopped: Bool) {
        pthread_mutex_lock(lock)
        while handed - givenBack == batches.count { pthread_cond_wait(toReader, lock) }
        let batch = batches[handed % batches.count], stopped = self.stopped
        pthread_mutex_unlock(lock)
        // Emptied here, so the packets are let go (freed, mostly) on the thread that made them.
        batch.clear()
        return (batch, stopped)
    }

    /// Reading thread: hands the batch filled last to every worker.
    func hand(_ batch: Batch) {
        pthread_mutex_lock(lock)
        handed += 1
        pthread_cond_broadcast(toWorkers)
        pthread_mutex_unlock(lock)
    }

    /// Caller's thread: batch number `number` (from 0), waiting for it.
    func filled(_ number: Int) -> Batch {
        filledOrAbandoned(number)!
    }

    /// A worker: batch number `number`, waiting for it; nil when none will come.
    func filledOrAbandoned(_ number: Int) -> Batch? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while number >= handed, !abandoned { pthread_cond_wait(toWorkers, lock) }
        return number < handed ? batches[number % batches.count] : nil
    }

    /// Caller's thread: every worker has ended the oldest batch in use; it is free again.
    func giveBack() {
        pthread_mutex_lock(lock)
        givenBack += 1
        pthread_cond_signal(toReader)
        pthread_mutex_unlock(lock)
    }

    /// Caller's thread: asks the reading thread to stop (it sees it at its next `nextEmpty`).
    func stop() {
        pthread_mutex_lock(lock)
        stopped = true
        pthread_mutex_unlock(lock)
    }

    var isStopped: Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return stopped
    }

    /// No batch will be handed over: waiting workers return.
    func abandon() {
        pthread_mutex_lock(lock)
        abandoned = true
        pthread_cond_broadcast(toWorkers)
        pthread_mutex_unlock(lock)
    }
}
