import Glibc

extension WorkerPool {
    /// One thread at normal priority with the shortest slice (0.1 ms) that, while a low-priority
    /// pool's job runs, wakes every `periodMicroseconds`: each wake-up preempts whatever runs
    /// and makes the kernel's scheduler pick again by who is owed the core.
    ///
    /// Without it, a job that got the core keeps it until the scheduler's next tick (4 ms at
    /// 250 Hz), since nothing else happens on a core that a busy event loop and a job share:
    /// every request waiting on that loop waits that long. Measured (bench/RESULTS.md,
    /// 2026-12-06): on one pinned core the reads' p99 beside logins at nice 6 was 4.7 ms, 2.2 ms
    /// with a wake-up every 1 ms; on every core, nothing pinned, 37 and 8 ms against 151 and 102
    /// ms in the two quieter of 5 rounds, and fewer reads and actions a second without it in 4
    /// and 5 rounds of 5. The wake-ups stop when no job runs. Before Linux 6.12 the thread keeps
    /// the kernel's slice and its wake-ups preempt less often.
    final class Rescheduler: Sendable {
        /// Jobs running, guarded by `condition` (taken by the pool's foreman and this thread only).
        private final class State: @unchecked Sendable {
            var running = 0
            var stopping = false
        }

        private let state = State()
        private let condition = Condition()
        private let periodNanoseconds: Int

        /// A rescheduler whose thread, named `name`, starts now.
        init(name: String, periodMicroseconds: Int) {
            periodNanoseconds = periodMicroseconds * 1000
            let thread = BackgroundThread { [self] in work() }
            thread.name = name
            thread.start()
        }

        /// A job started: wake up every period until none runs.
        func jobStarted() {
            condition.lock()
            state.running += 1
            condition.signal()
            condition.unlock()
        }

        /// A job ended.
        func jobEnded() {
            condition.lock()
            state.running -= 1
            condition.unlock()
        }

        /// Ends the thread.
        func stop() {
            condition.lock()
            state.stopping = true
            condition.signal()
            condition.unlock()
        }

        private func work() {
            // The shortest slice: a waking thread with a shorter slice than the running one
            // preempts it at once (EEVDF's PREEMPT_SHORT).
            _ = ThreadScheduling.takeShortestSlice()
            var next = timespec()
            while true {
                condition.lock()
                while state.running == 0 && !state.stopping { condition.wait() }
                let stopping = state.stopping
                condition.unlock()
                if stopping { return }
                clock_gettime(CLOCK_MONOTONIC, &next)
                next.tv_nsec += periodNanoseconds
                if next.tv_nsec >= 1_000_000_000 {
                    next.tv_sec += 1
                    next.tv_nsec -= 1_000_000_000
                }
                _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil)
            }
        }
    }
}
