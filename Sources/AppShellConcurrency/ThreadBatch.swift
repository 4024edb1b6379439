import Glibc

/// A thread finishing many things at once (the store writer answering the requests of one
/// transaction): work that each of them would do — the same work — runs once, when the thread is
/// done with all of them.
///
/// DESIGN: the store writer resumes the connections of the requests it answers. Resuming one
/// wakes the server's thread, which on a busy core (the server pinned to one) takes over at once,
/// answers that one request and sleeps again; the writer then resumes the next, and so on: one
/// wake-up, `epoll_wait` and context switch per request. In a batch the answers gather instead,
/// and at its end one connection is resumed, whose server thread resumes the others itself
/// (`PendingResponse`).
///
/// What the batch finished with can go the same way (`leave`): the requests' objects were made
/// on a server thread, and freed on the writer's each took the memory allocator's slow path on
/// both threads — the writer's cache of free memory overflows, the server thread's runs empty.
/// Handed to the server thread that resumes the batch's connections, they are freed where they
/// were made (2 us of the 33 an action costs with the SQLite store, the Performance article).
package enum ThreadBatch {
    private final class Frame {
        var keys: [ObjectIdentifier] = []
        var work: [() -> Void] = []
        var leftovers: [AnyObject] = []
    }

    /// The running batch's frame of each thread.
    private static let key = makeKey()
    /// The frame of the batch whose end work is running (which runs outside the batch).
    private static let endingKey = makeKey()

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }

    /// Runs `body` as a batch: work registered with `atEnd` on this thread meanwhile runs after
    /// it, in order. Inside a running batch it only runs `body` (the outer batch runs the work).
    package static func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard pthread_getspecific(key) == nil else { return try body() }
        let frame = Frame()
        pthread_setspecific(key, Unmanaged.passUnretained(frame).toOpaque())
        defer {
            pthread_setspecific(key, nil)
            pthread_setspecific(endingKey, Unmanaged.passUnretained(frame).toOpaque())
            for work in frame.work { work() }
            pthread_setspecific(endingKey, nil)
            // Not taken by the end work: let go of here.
            frame.leftovers = []
        }
        return try withExtendedLifetime(frame) { try body() }
    }

    /// Keeps `object` — something the batch finished with — until the batch's end work takes it
    /// (`takeLeftovers`) to let go of it on another thread; what no end work takes is let go of
    /// at the batch's end, on this thread. Outside a batch it does nothing (the caller lets go).
    package static func leave(_ object: AnyObject) {
        guard let raw = pthread_getspecific(Self.key) else { return }
        Unmanaged<Frame>.fromOpaque(raw).takeUnretainedValue().leftovers.append(object)
    }

    /// What the batch left (`leave`), taken from it: for its end work, which hands them to the
    /// thread that should let go of them. Empty anywhere else.
    package static func takeLeftovers() -> [AnyObject] {
        guard let raw = pthread_getspecific(Self.endingKey) else { return [] }
        let frame = Unmanaged<Frame>.fromOpaque(raw).takeUnretainedValue()
        defer { frame.leftovers = [] }
        return frame.leftovers
    }

    /// Registers `work` to run when this thread's batch ends — once per `key` and batch — and
    /// returns true; returns false, registering nothing, when the thread runs no batch.
    package static func atEnd(once key: ObjectIdentifier, _ work: @escaping () -> Void) -> Bool {
        guard let raw = pthread_getspecific(Self.key) else { return false }
        let frame = Unmanaged<Frame>.fromOpaque(raw).takeUnretainedValue()
        if !frame.keys.contains(key) {
            frame.keys.append(key)
            frame.work.append(work)
        }
        return true
    }
}
