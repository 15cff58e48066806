#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of reusable items going round between two threads, under one lock: the producer
/// takes a free one (waiting while there is none), fills it and hands it over; the consumer takes
/// the handed ones in order (waiting while there is none) and gives each back. Memory is what the
/// items hold, however far one thread runs ahead. Batches of packets between the reading thread
/// and the dissecting one go round this way (`Batch`), and so do the second lane's rendered bytes
/// (`LaneChunks`).
// Unchecked: its queues are read and written under its lock only; an item belongs to one side at a time.
final class RoundTrip<Item: AnyObject>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let toProducer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let toConsumer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Under `lock`.
    private var free: [Item]
    private var filled: [Item] = []
    private var stopped = false
    /// Time each side spent waiting for the other (nanoseconds), for balancing lanes.
    private var producerWaited: UInt64 = 0
    private var consumerWaited: UInt64 = 0

    init(_ items: [Item]) {
        free = items
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

    /// Producer: a free item (waiting for one), and whether the consumer asked to stop.
    func nextFree() -> (Item, stopped: Bool) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        producerWaited &+= wait(toProducer, while: free.isEmpty)
        return (free.removeLast(), stopped)
    }

    /// Producer: hands an item over.
    func hand(_ item: Item) {
        pthread_mutex_lock(lock)
        filled.append(item)
        pthread_cond_signal(toConsumer)
        pthread_mutex_unlock(lock)
    }

    /// Consumer: the next item handed over, in order, waiting for it.
    func nextFilled() -> Item {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        consumerWaited &+= wait(toConsumer, while: filled.isEmpty)
        // At most the number of items: taking the first moves a few references.
        return filled.removeFirst()
    }

    /// Consumer: gives an item back, emptied, to be filled again.
    func giveBack(_ item: Item) {
        pthread_mutex_lock(lock)
        free.append(item)
        pthread_cond_signal(toProducer)
        pthread_mutex_unlock(lock)
    }

    /// Consumer: asks the producer to stop (it sees it at its next `nextFree`).
    func stop() {
        pthread_mutex_lock(lock)
        stopped = true
        pthread_mutex_unlock(lock)
    }

    /// How long the producer has waited for a free item, and the consumer for a handed one, so
    /// far (nanoseconds).
    func waited() -> (producer: UInt64, consumer: UInt64) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return (producerWaited, consumerWaited)
    }

    /// Under `lock`: sleeps on `condition` while `blocked`; the time slept.
    private func wait(_ condition: UnsafeMutablePointer<pthread_cond_t>, while blocked: @autoclosure () -> Bool) -> UInt64 {
        guard blocked() else { return 0 }
        let start = monotonicNanoseconds()
        while blocked() { pthread_cond_wait(condition, lock) }
        return monotonicNanoseconds() &- start
    }
}

/// A monotonic clock's reading, in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}
