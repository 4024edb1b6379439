import Glibc

/// A POSIX counting semaphore: `signal` adds one and wakes a waiter, `wait` takes one or sleeps
/// until there is one.
///
/// Neither takes a lock: glibc's semaphore is one atomic counter and a futex, so a thread that is
/// preempted — however long, at whatever priority — in the middle of `signal` or `wait` holds up
/// no other thread. That is what a low-priority thread may use to hand something to a
/// normal-priority one (`WorkerPool`), where a mutex shared with it would be a priority inversion.
/// ThreadSanitizer understands it (a `signal` happens before the `wait` it ends).
package final class Semaphore: @unchecked Sendable {
    // @unchecked: sem_t is made for concurrent use; it lives at a fixed address.
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    /// A semaphore whose count is `value`.
    package init(value: UInt32 = 0) {
        semaphore.initialize(to: sem_t())
        sem_init(semaphore, 0, value)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Adds one to the count, waking a waiter if there is one.
    package func signal() { sem_post(semaphore) }

    /// Takes one from the count, sleeping until it is above zero (a signal interrupting the
    /// sleep does not end it).
    package func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}
