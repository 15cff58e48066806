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

extension Pipeline {
    /// Packets read into one batch before it is handed over, and packet bytes: each hand-over
    /// is a lock and, often, a thread woken on each side (tens of microseconds on a VM), so a
    /// batch is a thousand packets. (Two workers, taken in turn: fleet table, 256 packets and 128
    /// KB 1.72–1.83 s, 1,024 packets and 256 KB 1.45–1.52 s; bench capture, table 0.38 → 0.29
    /// s, text 1.08 → 0.83 s, peak 29 MB with 8 batches in flight, 40 MB with 16 of 512 KB.)
    public static let batchPackets = 1024
    static let batchBytes = 256 << 10
    /// Batches in flight: one being read into, one being dissected, the others waiting.
    static let batchesInFlight = 4

    /// Like `run`, with the reading half (the capture, the filter, the packet decoder, TCP
    /// reassembly) on a second thread, while this thread dissects and hands `emit` the events:
    /// the same events in the same order as `run` gives. Only packets and reassembly events go
    /// from one thread to the other; dissectors, PDUs and `emit` stay on the caller's thread.
    ///
    /// Returning false from `emit` stops the run at once: nothing more is emitted, not even what
    /// the end of input would flush (unlike `run`, which still flushes). With `maxPDUs` set,
    /// which needs the reading to stop exactly where the last PDU was made, this is `run`.
    public func runConcurrently<S: PacketSource>(_ source: inout S, emit: (OutputEvent) -> Bool) throws {
        guard options.maxPDUs == nil else { return try run(&source, emit: emit) }
        let queues = RoundTrip<Batch>(batches: Self.batchesInFlight)
        var failure: Error?
        try withUnsafeMutablePointer(to: &source) { pointer in
            let reading = SourcePointer(pointer)
            guard let reader = WorkerThread({ failure = self.readAll(reading.pointer, into: queues) }) else {
                return try run(&pointer.pointee, emit: emit)
            }
            while true {
                let batch = queues.nextFilled()
                // Once stopped, the batches still on their way are given back undissected.
                if !stage.stopped {
                    batch.dissect(with: stage, emit: emit)
                    if stage.stopped { queues.stop() }
                }
                let last = batch.isLast
                queues.giveBack(batch)
                if last { break }
            }
            reader.join()
        }
        if let failure { throw failure }
    }

    /// The reading thread's work: the whole source, in batches; the last batch flushes every
    /// connection (unless the run was stopped). Returns the source's error, if it threw one.
    ///
    /// With `workers` above 1 (a run in workers), each event is tagged with the worker that owns
    /// its connection (`Batch.worker(of:among:)`), and each batch numbers its first event in the
    /// run (`firstOrdinal`).
    func readAll<S: PacketSource, Q: BatchHandOver>(_ source: UnsafeMutablePointer<S>, into queues: Q, workers: Int = 1) -> Error? {
        var failure: Error?
        var (batch, stopped) = queues.nextEmpty()
        var ordinal = eventsRead
        batch.firstOrdinal = ordinal
        var packet = CapturedPacket.empty
        while !stopped {
            let more: Bool
            do { more = try source.pointee.next(into: &packet) } catch {
                failure = error
                break
            }
            guard more else { break }
            let start = batch.events.count
            switch read(packet, into: &batch.events) {
            case .none:
                continue
            case .note(let note):
                batch.items.append(.note(note))
            case .events:
                guard batch.events.count > start else { continue }
                if workers > 1 { batch.tag(from: start, workers: workers) }
                batch.items.append(.events(frame: packet.number, time: lastTime, end: batch.events.count))
                batch.bytes += packet.bytes.count
            }
            if batch.items.count >= batchPacketLimit || batch.bytes >= Self.batchBytes {
                ordinal += batch.events.count
                queues.hand(batch)
                (batch, stopped) = queues.nextEmpty()
                batch.firstOrdinal = ordinal
            }
        }
        if !stopped {
            let start = batch.events.count
            reassembler.flushAll(into: &batch.events)
            if workers > 1 { batch.tag(from: start, workers: workers) }
            batch.items.append(.finish(frame: lastFrame, time: lastTime, end: batch.events.count))
        }
        batch.isLast = true
        eventsRead = ordinal + batch.events.count
        queues.hand(batch)
        return failure
    }
}

/// The source of a concurrent run, read by the reading thread alone while the caller waits.
// Unchecked: the source is used by the reading thread alone while the caller waits for it.
struct SourcePointer<S>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<S>
    init(_ pointer: UnsafeMutablePointer<S>) { self.pointer = pointer }
}

/// Packets read and reassembled, on their way to be dissected. A batch goes round: read into,
/// dissected, emptied, read into again.
// Unchecked: a batch belongs to one thread at a time, handed over through a `RoundTrip`.
final class Batch: @unchecked Sendable {
    enum Item {
        /// One packet's reassembly events: `events` up to `end`, from where the item before ended.
        case events(frame: Int, time: Timestamp, end: Int)
        /// A note about the capture, emitted in its place.
        case note(OutputEvent)
        /// The end of input: every connection flushed.
        case finish(frame: Int, time: Timestamp, end: Int)
    }

    // Written by the reading thread, then read by the threads it was handed to (under the
    // hand-over's lock), until it is given back: no access is ever concurrent with a write.
    @exclusivity(unchecked) var events: [ReassemblyEvent] = []
    // Appended to by the reading thread before the hand-over, only read by the consumers after it.
    @exclusivity(unchecked) var items: [Item] = []
    // Used by the reading thread alone, while it fills the batch (`readAll`, `clear`).
    @exclusivity(unchecked) var bytes = 0
    // Set by the reading thread before the hand-over, only read by the consumers after it.
    @exclusivity(unchecked) var isLast = false
    /// In a run in workers: the worker of each event, and the place of the first event in the
    /// whole run (event `i` is the run's `firstOrdinal + i`th).
    // Tagged by the reading thread before the hand-over (`tag`), only read by the workers after it.
    @exclusivity(unchecked) var workers: [UInt8] = []
    // Set by the reading thread before the hand-over, only read by the workers after it.
    @exclusivity(unchecked) var firstOrdinal = 0

    func clear() {
        events.removeAllEvents()
        items.removeAll(keepingCapacity: true)
        workers.removeAll(keepingCapacity: true)
        bytes = 0
        isLast = false
    }

    /// Tags the events from `start` on with the worker that owns their connection.
    func tag(from start: Int, workers count: Int) {
        for i in start..<events.count {
            workers.append(Batch.worker(of: events[i].stream, among: count))
        }
    }

    /// The worker that owns connection `stream` among `count`: by a hash of its number (a
    /// multiplicative hash: consecutive numbers spread evenly), for the connection's whole life.
    @inline(__always)
    static func worker(of stream: Int, among count: Int) -> UInt8 {
        let hash = (UInt64(bitPattern: Int64(stream)) &* 0x9E37_79B9_7F4A_7C15) >> 32
        return UInt8(truncatingIfNeeded: Int(hash) % count)
    }

    /// Calls `body` with each event's index, in order, and the frame and time it is attributed
    /// to, and `note` with each note in its place (and the index of the event after it); stops
    /// when either returns false. (The workers of a run take the events one at a time; `dissect`
    /// takes a packet's at once.)
    func forEachEvent(_ body: (_ index: Int, _ frame: Int, _ time: Timestamp) -> Bool, note: (OutputEvent, _ next: Int) -> Bool) {
        var start = 0
        for item in items {
            switch item {
            case .events(let frame, let time, let end), .finish(let frame, let time, let end):
                for i in start..<end {
                    if !body(i, frame, time) { return }
                }
                start = end
            case .note(let event):
                if !note(event, start) { return }
            }
        }
    }

    /// Dissects the batch's items in order, emitting as `Pipeline.process` and `finish` do.
    func dissect(with stage: StreamStage, emit: (OutputEvent) -> Bool) {
        var start = 0
        for item in items {
            switch item {
            case .events(let frame, let time, let end):
                stage.handle(events[start..<end], frame: frame, time: time, emit: emit)
                start = end
            case .note(let note):
                stage.send(note, emit)
            case .finish(let frame, let time, let end):
                stage.finish(events[start..<end], frame: frame, time: time, emit: emit)
                start = end
            }
            if stage.stopped { return }
        }
    }
}

/// How the reading thread gets empty batches and hands filled ones on: to one consumer in order
/// (`RoundTrip`), or to every worker of a run (`BatchRing`).
protocol BatchHandOver {
    /// An empty batch (waiting for one), and whether the run was stopped.
    func nextEmpty() -> (Batch, stopped: Bool)
    func hand(_ batch: Batch)
}

extension RoundTrip: BatchHandOver where Item == Batch {}

extension RoundTrip where Item == Batch {
    /// Batches in flight, made empty.
    convenience init(batches count: Int) {
        self.init((0..<count).map { _ in Batch() })
    }

    /// Reading thread: an empty batch (waiting for one), and whether the run was stopped.
    func nextEmpty() -> (Batch, stopped: Bool) {
        let (batch, stopped) = nextFree()
        // Emptied here, so the packets are let go (freed, mostly) on the thread that made them.
        batch.clear()
        return (batch, stopped)
    }
}

/// A thread running one closure, joined once.
final class WorkerThread {
    private final class ThreadBody {
        let run: () -> Void
        init(running: @escaping () -> Void) { run = running }
    }

    #if canImport(Darwin)
    private var thread: pthread_t?
    #else
    private var thread = pthread_t()
    #endif

    /// A thread's stack: a worker dissects (field tables nest, to a capped depth), and the
    /// default elsewhere (512 KB on Darwin) is less than the main thread's 8 MB on Linux.
    static let stackBytes = 8 << 20

    /// Nil when the system cannot start a thread.
    init?(_ run: @escaping () -> Void) {
        let body = Unmanaged<ThreadBody>.passRetained(ThreadBody(running: run))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, Self.stackBytes)
        let made = pthread_create(&thread, &attributes, { pointer in
            #if canImport(Darwin)
            let body = Unmanaged<ThreadBody>.fromOpaque(pointer).takeRetainedValue()
            #else
            let body = Unmanaged<ThreadBody>.fromOpaque(pointer!).takeRetainedValue()
            #endif
            body.run()
            return nil
        }, body.toOpaque())
        if made != 0 {
            body.release()
            return nil
        }
    }

    func join() {
        #if canImport(Darwin)
        if let thread { pthread_join(thread, nil) }
        #else
        pthread_join(thread, nil)
        #endif
    }
}
