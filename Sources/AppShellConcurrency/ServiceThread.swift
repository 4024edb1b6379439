import Glibc

/// A thread of its own that serves work other threads queue — the store writer's commits, the
/// session loader's loads — and its life: started once, stopped once it has served what was
/// queued.
///
/// The owner keeps its queue and guards it with `condition` (lock it, add to the queue unless
/// `isStopping`, `signal`, unlock); its thread's loop takes the lock, calls `waitForWork` and,
/// while that returns true, takes work from the queue and serves it without the lock. `stop`
/// makes `waitForWork` return false once the queue is empty, and waits for that.
package final class ServiceThread: @unchecked Sendable {
    // @unchecked: every field is read and written holding `condition`.

    /// Guards the owner's queue and this thread's state.
    package let condition = Condition()
    /// The name the thread takes.
    package let name: String
    private var stopping = false
    private var running = false
    private var thread: pthread_t?

    /// A service whose thread, named `name`, starts with `start`.
    package init(name: String) { self.name = name }

    /// Starts the thread running `loop` (the owner's: `waitForWork`, then the work, until
    /// `waitForWork` says to end).
    package func start(_ loop: @escaping @Sendable () -> Void) {
        condition.lock()
        running = true
        condition.unlock()
        let thread = BackgroundThread { [self] in
            condition.lock()
            self.thread = pthread_self()
            condition.unlock()
            loop()
        }
        thread.name = name
        thread.start()
    }

    /// Whether `stop` was called: queue nothing more. Read holding `condition`.
    package var isStopping: Bool { stopping }

    /// On the service's thread, holding `condition`: sleeps until `hasWork()` or `stop`. Returns
    /// true with work to take (still holding the lock), or false when stopping with nothing left:
    /// the thread counts as ended (`stop` returns), and its loop should unlock and return.
    package func waitForWork(_ hasWork: () -> Bool) -> Bool {
        while !hasWork() && !stopping { condition.wait() }
        if hasWork() { return true }
        running = false
        condition.broadcast()
        return false
    }

    /// `waitForWork` for a service that also has work of its own to do now and then: returns true
    /// (holding the lock) when `hasWork()`, or once about `milliseconds` have passed without it
    /// (or the thread was woken for nothing): the caller checks which. False when stopping with
    /// nothing left, as `waitForWork`.
    package func waitForWork(_ hasWork: () -> Bool, atMostMilliseconds milliseconds: Int) -> Bool {
        if !hasWork() && !stopping { condition.wait(milliseconds: milliseconds) }
        if hasWork() || !stopping { return true }
        running = false
        condition.broadcast()
        return false
    }

    /// Takes no more work, lets the thread serve what is queued and returns once it ended. Called
    /// on the service's own thread (its owner's last reference dropped there), it does not wait:
    /// the thread ends once it returns to its loop.
    package func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let onThread = thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        while running && !onThread { condition.wait() }
        condition.unlock()
    }
}
