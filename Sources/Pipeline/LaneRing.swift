#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// What a second lane rendered, on its way to the caller's thread, which writes it out in
/// capture order: one producer, one consumer, a fixed number of bytes. The bytes go as records:
/// a piece of an event's output, the end of an event's output (with what dissecting it cost), or
/// the end of a batch.
///
/// Fixed, so the memory a run holds does not grow with how far one lane runs ahead of the
/// other (bytes rendered per batch reach megabytes when a segment carries thousands of PDUs):
/// a producer that finds it full waits for the consumer.
final class LaneRing: @unchecked Sendable {
    enum Kind: UInt32 {
        /// Part of an event's bytes; more follow.
        case piece = 1
        /// The last of an event's bytes (maybe none).
        case eventEnd = 2
        /// The producer is done with its batch.
        case batchEnd = 3
    }

    /// Bytes of the ring (a power of two). Records start at multiples of 16, the size of their
    /// header, so a header never wraps round the end.
    let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    /// Bytes ever written and ever read: the ring holds `written - read`.
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    /// The producer's and the consumer's own copies of their counters (only they write them).
    @exclusivity(unchecked) private var producerWritten = 0
    @exclusivity(unchecked) private var consumerRead = 0
    private let consumerParking = Parking()
    private let producerParking = Parking()
    /// Time the producer has waited for room, and the consumer for records (nanoseconds).
    let producerWaited = Atomic<UInt64>(0)
    let consumerWaited = Atomic<UInt64>(0)
    static let headerBytes = 16

    init(capacity: Int = 1 << 22) {
        precondition(capacity >= 1 << 12 && capacity & (capacity - 1) == 0)
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The largest record's bytes: a longer one goes as several pieces.
    var maxRecordBytes: Int { capacity / 4 }

    /// Producer: appends a record of `bytes` and `cost` (waiting for room), splitting it into
    /// pieces when it is longer than `maxRecordBytes` (the last carries `kind` and `cost`).
    func push(_ bytes: UnsafeRawBufferPointer, kind: Kind, cost: UInt64 = 0) {
        var rest = bytes
        while rest.count > maxRecordBytes {
            pushRecord(UnsafeRawBufferPointer(rebasing: rest[..<maxRecordBytes]), kind: .piece, cost: 0)
            rest = UnsafeRawBufferPointer(rebasing: rest[maxRecordBytes...])
        }
        pushRecord(rest, kind: kind, cost: cost)
    }

    private func pushRecord(_ bytes: UnsafeRawBufferPointer, kind: Kind, cost: UInt64) {
        let size = Self.headerBytes + (bytes.count + 15) & ~15
        let start = producerWritten
        if capacity - (start - read.load(ordering: .acquiring)) < size {
            let began = monotonicNanoseconds()
            producerParking.wait { capacity - (start - read.load(ordering: .sequentiallyConsistent)) >= size }
            producerWaited.add(monotonicNanoseconds() &- began, ordering: .relaxed)
        }
        let at = start & (capacity - 1)
        buffer.storeBytes(of: kind.rawValue, toByteOffset: at, as: UInt32.self)
        buffer.storeBytes(of: UInt32(bytes.count), toByteOffset: at + 4, as: UInt32.self)
        buffer.storeBytes(of: cost, toByteOffset: at + 8, as: UInt64.self)
        copyIn(bytes, at: (at + Self.headerBytes) & (capacity - 1))
        producerWritten = start + size
        written.store(producerWritten, ordering: .sequentiallyConsistent)
        consumerParking.wake()
    }

    private func copyIn(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard let from = bytes.baseAddress, !bytes.isEmpty else { return }
        let first = min(bytes.count, capacity - offset)
        (buffer + offset).copyMemory(from: from, byteCount: first)
        if first < bytes.count { buffer.copyMemory(from: from + first, byteCount: bytes.count - first) }
    }

    /// Consumer: the next record (waiting for one), its bytes handed to `body` in one or two
    /// parts (two when they wrap round the end); then its room is given back. Returns the
    /// record's kind and cost.
    @discardableResult
    func pop(_ body: (UnsafeRawBufferPointer) -> Void) -> (kind: Kind, cost: UInt64) {
        let start = consumerRead
        if written.load(ordering: .acquiring) == start {
            let began = monotonicNanoseconds()
            consumerParking.wait { written.load(ordering: .sequentiallyConsistent) != start }
            consumerWaited.add(monotonicNanoseconds() &- began, ordering: .relaxed)
        }
        let at = start & (capacity - 1)
        let kind = Kind(rawValue: buffer.load(fromByteOffset: at, as: UInt32.self))!
        let count = Int(buffer.load(fromByteOffset: at + 4, as: UInt32.self))
        let cost = buffer.load(fromByteOffset: at + 8, as: UInt64.self)
        let offset = (at + Self.headerBytes) & (capacity - 1)
        let first = min(count, capacity - offset)
        if first > 0 { body(UnsafeRawBufferPointer(start: buffer + offset, count: first)) }
        if first < count { body(UnsafeRawBufferPointer(start: buffer, count: count - first)) }
        consumerRead = start + Self.headerBytes + (count + 15) & ~15
        read.store(consumerRead, ordering: .sequentiallyConsistent)
        producerParking.wake()
        return (kind, cost)
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
