import Glibc

/// A value behind a pthread mutex: the one lock type of AppShell.
///
/// `Synchronization.Mutex` would do the same job, but ThreadSanitizer does not see its futex-based
/// locking on Linux and reports every access it protects as a race; a pthread mutex is intercepted,
/// so `swift test --sanitize=thread` reports only real races.
///
/// The value and the mutex live in one heap object (a `ManagedBuffer` with the mutex as its one
/// element), so a lock costs one allocation. Copies of a `Locked` share that object, as references
/// to a class would.
public struct Locked<Value>: @unchecked Sendable {
    // @unchecked: the value is only read or written between lock and unlock of the mutex.

    /// The value (the header) and the mutex (the one element).
    @usableFromInline
    final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    @usableFromInline let storage: Storage

    /// A lock guarding `value`.
    @inlinable
    public init(_ value: Value) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in value }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            // Adaptive: a waiter spins briefly before sleeping, which suits the short critical
            // sections here better than going to the kernel at once.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        }
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    @inlinable @inline(__always)
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // The buffer's memory stays where it is for the object's life, which this call extends.
        try withExtendedLifetime(storage) { () throws(Failure) -> Result in
            let (value, mutex) = storage.withUnsafeMutablePointers { ($0, $1) }
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
