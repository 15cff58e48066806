#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Where a thread waits for another one's progress without spinning: it sleeps on a condition
/// variable, and the other thread signals it only when it is asleep (one atomic load per
/// `wake` otherwise). Both sides' atomics are sequentially consistent, so either the sleeper
/// sees the progress or the waker sees the sleeper.
// Unchecked: its mutex and condition are pthreads', which synchronise their users.
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
