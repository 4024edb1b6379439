import Glibc

/// A pthread mutex with a condition variable: a thread holding the lock sleeps in `wait` until
/// another signals it or a timeout passes. Foundation's `NSCondition` without Foundation (whose
/// internationalization data would be linked into the server); ThreadSanitizer understands it.
///
/// Timeouts run on the monotonic clock: setting the wall clock neither shortens nor lengthens them.
/// As with every condition variable, a waiter may also wake with no signal: it checks what it waits
/// for again after each wait.
package final class Condition: @unchecked Sendable {
    // @unchecked: the mutex and the condition variable are what makes concurrent use safe; they
    // live at fixed addresses, as pthreads require.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// An unlocked condition with no waiter.
    package init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Takes the lock, waiting for it if another thread holds it.
    package func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes one waiting thread, if any (call it holding the lock, so that no wake-up is lost
    /// between a waiter's check and its wait).
    package func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiting thread.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// With the lock held: releases it, sleeps until woken, and takes it again.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// With the lock held: releases it, sleeps until woken or until `milliseconds` have passed,
    /// and takes it again. Returns `false` when the time passed, `true` when woken earlier.
    @discardableResult
    package func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = deadline.tv_nsec + (max(0, milliseconds) % 1000) * 1_000_000
        deadline.tv_sec += max(0, milliseconds) / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }
}
