import AppShellConcurrency

/// Runs work at a given time with no request from the browser — the splash finishing after its
/// delay, a reminder firing — on a `TimerQueue`'s thread: the server's shared one, or a queue of its
/// own read on the shell's clock.
///
/// Deadlines are on the shell's clock (milliseconds since 1970). On a shared queue, whose clock is
/// the monotonic one, a deadline becomes a delay when it is scheduled: a wall clock set meanwhile
/// moves no reminder.
package final class ShellScheduler: Sendable {
    private struct State {
        /// The entries scheduled and not yet finished or dropped, by key.
        var entries: [UInt64: TimerQueue.Timer] = [:]
        var nextKey: UInt64 = 0
        /// The key of the entry whose work runs now.
        var running: UInt64?
    }

    private let state = Locked(State())
    private let clock: @Sendable () -> Int64
    private let timers: TimerQueue
    /// Whether `timers` is the scheduler's own (then it is read on `clock`, and started and
    /// stopped with the scheduler).
    private let ownsTimers: Bool

    /// A scheduler reading the time (milliseconds since 1970) from `clock`, running its work on
    /// `timers` (the server's shared queue), or on a queue of its own when it is `nil`.
    package init(clock: @escaping @Sendable () -> Int64, timers: TimerQueue? = nil) {
        self.clock = clock
        ownsTimers = timers == nil
        self.timers = timers ?? TimerQueue(name: "appshell-scheduler", clock: clock)
    }

    /// The number of entries waiting.
    package var pendingCount: Int { state.withLock { $0.entries.count - ($0.running == nil ? 0 : 1) } }

    /// Runs `work` on the queue's thread at `deadline` (milliseconds since 1970 on the shell's clock).
    package func schedule(at deadline: Int64, _ work: @escaping @Sendable () -> Void) {
        // The queue is called with this lock held, so that the entry is known before it can run
        // (the queue's thread takes this lock only after releasing its own).
        state.withLock { current in
            current.nextKey += 1
            current.entries[current.nextKey] = enqueue(current.nextKey, at: deadline, work)
        }
    }

    /// Puts entry `key` on the queue for `deadline`; called with the state's lock held.
    private func enqueue(
        _ key: UInt64, at deadline: Int64, _ work: @escaping @Sendable () -> Void
    ) -> TimerQueue.Timer {
        let run: @Sendable () -> Void = { [weak self] in self?.run(key, at: deadline, work) }
        return ownsTimers ? timers.schedule(at: deadline, run) : timers.schedule(after: deadline - clock(), run)
    }

    /// Runs entry `key` on the queue's thread, unless `stop()` dropped it.
    private func run(_ key: UInt64, at deadline: Int64, _ work: @escaping @Sendable () -> Void) {
        let runs = state.withLock { current -> Bool in
            guard current.entries[key] != nil else { return false }
            // The shared queue's clock and the shell's are each read to the millisecond: the
            // delay may end a millisecond before the deadline does on the shell's clock, where the
            // work checks it (a splash that is not yet due would then wait for the next request).
            if clock() < deadline {
                current.entries[key] = enqueue(key, at: deadline, work)
                return false
            }
            current.running = key
            return true
        }
        guard runs else { return }
        work()
        state.withLock {
            $0.entries[key] = nil
            $0.running = nil
        }
    }

    /// Starts the queue's thread (the shared queue's, if it is not started yet).
    package func start() { timers.start() }

    /// Drops the entries waiting and waits for one that is running to finish (unless called from
    /// it); stops the queue's thread if the queue is the scheduler's own.
    package func stop() {
        let entries = state.withLock { state in
            defer { state.entries = [:] }
            return Array(state.entries.values)
        }
        for timer in entries { timers.cancel(timer) }
        if ownsTimers { timers.stop() }
    }
}
