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
public enum ThreadBatch {
    private final class Frame {
        var keys: [ObjectIdentifier] = []
        var work: [() -> Void] = []
    }

    /// The running batch's frame of each thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Runs `body` as a batch: work registered with `atEnd` on this thread meanwhile runs after
    /// it, in order. Inside a running batch it only runs `body` (the outer batch runs the work).
    public static func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard pthread_getspecific(key) == nil else { return try body() }
        let frame = Frame()
        pthread_setspecific(key, Unmanaged.passUnretained(frame).toOpaque())
        defer {
            pthread_setspecific(key, nil)
            for work in frame.work { work() }
        }
        return try withExtendedLifetime(frame) { try body() }
    }

    /// Registers `work` to run when this thread's batch ends — once per `key` and batch — and
    /// returns true; returns false, registering nothing, when the thread runs no batch.
    public static func atEnd(once key: ObjectIdentifier, _ work: @escaping () -> Void) -> Bool {
        guard let raw = pthread_getspecific(Self.key) else { return false }
        let frame = Unmanaged<Frame>.fromOpaque(raw).takeUnretainedValue()
        if !frame.keys.contains(key) {
            frame.keys.append(key)
            frame.work.append(work)
        }
        return true
    }
}
