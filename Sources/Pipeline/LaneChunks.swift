#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dissection
import Synchronization

/// Bytes the second lane rendered, and where each event's bytes end: a chunk of them, handed to
/// the caller's thread whole and given back once copied out.
final class LaneChunk {
    enum Kind {
        /// Part of an event's bytes; more follow in the next chunk.
        case piece
        /// The last of an event's bytes (maybe none).
        case eventEnd
        /// The lane is done with its batch.
        case batchEnd
    }

    // Used by one thread at a time, handed over under the chunks' lock.
    @exclusivity(unchecked) var bytes = ByteSink(capacity: LaneChunks.chunkBytes + (4 << 10))
    /// Where each record's bytes end (they start where the one before ended); the last one
    /// ends with `bytes` when the chunk is handed over.
    @exclusivity(unchecked) var records: [(end: Int, kind: Kind)] = []
}

/// The chunks between the second lane and the caller's thread: a fixed number, so memory stays
/// flat however far the lane runs ahead (it waits for a free chunk), each rendered into in place
/// and copied once, into the output.
final class LaneChunks: @unchecked Sendable {
    /// A chunk is handed over once it holds this many bytes (or at the end of a batch).
    static let chunkBytes = 32 << 10
    static let count = 32
    /// A chunk given back with more room than this is made anew at its usual size.
    static let keptBytes = 4 * chunkBytes

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let toProducer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let toConsumer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Under `lock`.
    private var free: [LaneChunk]
    private var filled: [LaneChunk] = []
    private var producerWaited: UInt64 = 0
    private var consumerWaited: UInt64 = 0
    // The consumer's alone: the chunk being copied out, and its next record.
    @exclusivity(unchecked) private var reading: LaneChunk?
    @exclusivity(unchecked) private var nextRecord = 0

    init(count: Int = LaneChunks.count) {
        free = (0..<count).map { _ in LaneChunk() }
        pthread_mutex_init(lock, nil)
        pthread_cond_init(toProducer, nil)
        pthread_cond_init(toConsumer, nil)
    }

    deinit {
        pthread_cond_destroy(toConsumer)
        pthread_cond_destroy(toProducer)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        toProducer.deallocate()
        toConsumer.deallocate()
    }

    /// Producer: an empty chunk, waiting for one.
    func nextFree() -> LaneChunk {
        pthread_mutex_lock(lock)
        if free.isEmpty {
            let start = monotonicNanoseconds()
            while free.isEmpty { pthread_cond_wait(toProducer, lock) }
            producerWaited &+= monotonicNanoseconds() &- start
        }
        let chunk = free.removeLast()
        pthread_mutex_unlock(lock)
        return chunk
    }

    /// Producer: hands a chunk over; its last record ends with its bytes.
    func hand(_ chunk: LaneChunk) {
        assert(chunk.records.last?.end == chunk.bytes.bytes.count)
        pthread_mutex_lock(lock)
        filled.append(chunk)
        pthread_cond_signal(toConsumer)
        pthread_mutex_unlock(lock)
    }

    /// Consumer: the next record's bytes handed to `body` (none for an empty record), waiting
    /// for a chunk when need be; returns the record's kind.
    func pop(_ body: (UnsafeBufferPointer<UInt8>) -> Void) -> LaneChunk.Kind {
        let chunk: LaneChunk
        if let reading {
            chunk = reading
        } else {
            chunk = nextFilled()
            reading = chunk
            nextRecord = 0
        }
        let from = nextRecord == 0 ? 0 : chunk.records[nextRecord - 1].end
        let record = chunk.records[nextRecord]
        if record.end > from { body(UnsafeBufferPointer(rebasing: chunk.bytes.bytes[from..<record.end])) }
        nextRecord += 1
        if nextRecord == chunk.records.count {
            reading = nil
            giveBack(chunk)
        }
        return record.kind
    }

    private func nextFilled() -> LaneChunk {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if filled.isEmpty {
            let start = monotonicNanoseconds()
            while filled.isEmpty { pthread_cond_wait(toConsumer, lock) }
            consumerWaited &+= monotonicNanoseconds() &- start
        }
        // At most `count` chunks: taking the first moves a few references.
        return filled.removeFirst()
    }

    private func giveBack(_ chunk: LaneChunk) {
        // A chunk grows past its size by the last PDU rendered into it; one grown by a very
        // large PDU (a frame of thousands of table entries) is not kept that large.
        if chunk.bytes.capacity > Self.keptBytes { chunk.bytes = ByteSink(capacity: Self.chunkBytes + (4 << 10)) }
        chunk.bytes.removeAll()
        chunk.records.removeAll(keepingCapacity: true)
        pthread_mutex_lock(lock)
        free.append(chunk)
        pthread_cond_signal(toProducer)
        pthread_mutex_unlock(lock)
    }

    /// How long the producer has waited for a free chunk, and the consumer for a filled one
    /// (nanoseconds).
    func waited() -> (producer: UInt64, consumer: UInt64) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return (producerWaited, consumerWaited)
    }
}

/// Where a thread waits for another one's progress without spinning: it sleeps on a condition
/// variable, and the other thread signals it only when it is asleep (one atomic load per
/// `wake` otherwise). Both sides' atomics are sequentially consistent, so either the sleeper
/// sees the progress or the waker sees the sleeper.
final class Parking: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let sleeping = Atomic<Bool>(false)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Returns once `ready` is true, sleeping while it is not.
    func wait(until ready: () -> Bool) {
        pthread_mutex_lock(mutex)
        sleeping.store(true, ordering: .sequentiallyConsistent)
        while !ready() { pthread_cond_wait(condition, mutex) }
        sleeping.store(false, ordering: .sequentiallyConsistent)
        pthread_mutex_unlock(mutex)
    }

    /// Wakes the sleeper, if there is one: call after making progress visible.
    func wake() {
        guard sleeping.load(ordering: .sequentiallyConsistent) else { return }
        pthread_mutex_lock(mutex)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
