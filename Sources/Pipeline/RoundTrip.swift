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
/// and the dissecting one go round this way (`Batch`), and so do a worker's rendered bytes
/// (`RenderedChunks`).
// Unchecked: its queues are read and written under its lock only; an item belongs to one side at a time.
final class RoundTrip<Item: AnyObject>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let toProducer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let toConsumer = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Under `lock`.
    private var free: [Item]
    private var filled: [Item] = []
    private var stopped = false

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
        while free.isEmpty { pthread_cond_wait(toProducer, lock) }
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
        while filled.isEmpty { pthread_cond_wait(toConsumer, lock) }
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
}
