import Glibc

/// One thread that runs work at given times: once at a deadline, or again and again at an
/// interval. The server has one, shared by everything it does with no request to answer — the
/// splash finishing and reminders (`ShellScheduler`), the event streams' heartbeats, the session
/// sweeper — instead of a thread of its own for each that sleeps until its next deadline.
///
/// Deadlines are kept in a heap, earliest first; work due at the same time runs in the order it
/// was scheduled. Work runs one piece at a time on the queue's thread: work that runs long delays
/// what is due meanwhile, which then runs at once, still in deadline order (the clock is read
/// again before each piece). Work is meant to be short; the longest in the server is the session
/// sweep (an SQLite `DELETE` of expired rows), during which heartbeats and reminders wait.
///
/// Times are milliseconds on `clock`, by default the monotonic clock (setting the wall clock
/// neither hastens nor delays anything); tests pass a clock they move, then call `wake()`.
///
/// ```swift
/// let timers = TimerQueue(name: "appshell-timers")
/// timers.start()
/// let sweep = timers.schedule(every: 60_000) { try? registry.sweep() }
/// …
/// timers.cancel(sweep)  // waits for a sweep that is running
/// timers.stop()         // waits for the thread to end
/// ```
///
/// A queue that is no longer referenced ends its thread once its current work returns; `stop()`
/// ends it and waits, which is how an owner knows no timer work runs any more (the server stops its
/// queue before it closes the store).
///
/// Why not libdispatch's timer sources (the library is linked): their handlers run on Dispatch's
/// clock, which a test cannot move, and cancelling one does not wait for a handler that is running,
/// which the server's shutdown needs (the store closes after the last timer work). This is a
/// reason of behaviour, not a measurement: neither was timed against the other.
package final class TimerQueue: Sendable {
    /// A scheduled piece of work, to cancel it.
    package struct Timer: Hashable, Sendable {
        let number: UInt64
    }

    /// The monotonic clock in milliseconds (since an unspecified start): the default clock.
    package static let monotonicClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// The longest the thread sleeps before it reads the clock again, in milliseconds: a clock
    /// that jumps (a test's) is noticed within this time even when nobody calls `wake()`.
    package static let longestSleep = 1000

    /// The clock deadlines are read on, in milliseconds.
    package let clock: @Sendable () -> Int64
    private let core: TimerQueueCore

    /// A stopped queue whose thread will be called `name` (Linux shows 15 bytes of it) and whose
    /// deadlines are read on `clock`.
    package init(name: String = "appshell-timers", clock: @escaping @Sendable () -> Int64 = TimerQueue.monotonicClock) {
        self.clock = clock
        core = TimerQueueCore(name: name, clock: clock)
    }

    deinit { core.requestStop() }

    /// The time now on the queue's clock.
    package var now: Int64 { clock() }

    /// The timers waiting to run: one-shot timers not yet begun, and repeating timers not cancelled.
    package var pendingCount: Int { core.pendingCount }

    /// Whether the thread runs (between `start()` and `stop()`).
    package var isRunning: Bool { core.isRunning }

    /// Runs `work` once on the queue's thread at `deadline` (on `clock`), or as soon as it starts
    /// if the deadline has passed.
    @discardableResult
    package func schedule(at deadline: Int64, _ work: @escaping @Sendable () -> Void) -> Timer {
        Timer(number: core.add(deadline: deadline, interval: 0, work: work))
    }

    /// Runs `work` once on the queue's thread `delay` milliseconds from now.
    @discardableResult
    package func schedule(after delay: Int64, _ work: @escaping @Sendable () -> Void) -> Timer {
        schedule(at: clock() + delay, work)
    }

    /// Runs `work` on the queue's thread every `interval` milliseconds (more than 0), the first time
    /// at `first` (by default one interval from now), until cancelled.
    ///
    /// Runs keep to their times (each is due one interval after the previous one was due), except
    /// after a run that began a whole interval or more late: the runs missed are not made up in a
    /// burst, the next is one interval after that late run ended.
    @discardableResult
    package func schedule(
        every interval: Int64, startingAt first: Int64? = nil, _ work: @escaping @Sendable () -> Void
    ) -> Timer {
        precondition(interval > 0, "a repeating timer's interval is more than 0 ms")
        return Timer(number: core.add(deadline: first ?? clock() + interval, interval: interval, work: work))
    }

    /// Cancels `timer`: it does not run (again). When its work is running now on the queue's thread,
    /// waits for it to return (unless called from that work). Returns whether the timer was still
    /// waiting; false when a one-shot timer has begun or it was cancelled before.
    @discardableResult
    package func cancel(_ timer: Timer) -> Bool { core.cancel(timer.number) }

    /// Starts the thread; timers already scheduled run from now on. Does nothing when it runs.
    package func start() { core.start() }

    /// Stops the thread and waits until it has ended (its current work returned), unless called
    /// from the queue's own work. Timers that have not run stay scheduled: they run if the queue
    /// is started again. Does nothing when the thread does not run.
    package func stop() { core.stop() }

    /// Makes the thread read the clock again now (after a test moved it).
    package func wake() { core.wake() }
}
