import Glibc

/// A value behind a pthread mutex: the one lock type of AppShell.
///
/// `Synchronization.Mutex` would do the same job, but ThreadSanitizer does not see its futex-based
/// locking on Linux and reports every access it protects as a race; a pthread mutex is intercepted,
/// so `swift test --sanitize=thread` reports only real races.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between lock and unlock of `mutex`.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Adaptive: a waiter spins briefly before sleeping, which suits the short critical sections
        // here better than going to the kernel at once.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    @inlinable @inline(__always)
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
