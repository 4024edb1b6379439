import Glibc

/// A fixed number of threads that run jobs from a bounded queue: work that would block an event
/// loop (a password check) runs here instead, and a caller finds out at once when the queue is
/// full (to answer 503) instead of waiting.
///
/// A place in the queue is taken first (`reserve`) and filled later (`Reservation.submit`), so
/// that a caller can refuse at once while it still can change its answer, and submit only once
/// what must come before the job is done; a reservation dropped unused gives its place back.
///
/// A place belongs to a lane (`reserve(lane:)`: a client's network, for password checks), and the
/// threads take the waiting jobs lane by lane in turns (`RoundRobinQueue`): a client with many
/// jobs queued delays another's by at most one of its own each. Jobs of one lane run in order.
///
/// A pool's threads may run at a lower priority than the server's (`nice`): each raises its own
/// nice value when it starts (Linux keeps one per thread; raising it needs no privilege, and no
/// thread can lower it again without one). Such a pool has a foreman: one thread at the priority
/// of the thread that made the pool (normal, at start-up), started with the pool, that hands the
/// queued jobs to the pool's threads and runs what follows each job as it finds it ended
/// (`Reservation.submit(_:then:)`). The pool's threads take no lock at all: each waits on a
/// semaphore of its own for its next job and tells the foreman a job ended through an atomic and
/// the foreman's semaphore. A lock they shared with normal-priority threads would be a priority
/// inversion: a low-priority thread preempted while holding it keeps it until the kernel gives it
/// the core again, and whoever waits for it — an event loop reserving a place for a login — waits
/// that long. What follows a password check takes locks others wait for and wakes the task that
/// awaits it (a thread started from a low-priority thread inherits its priority for good), so it
/// runs on the foreman too; the job itself keeps the pool's priority. While a job runs, a
/// rescheduler thread wakes every millisecond so that an event loop waiting for the core gets it
/// back within about that, not at the kernel's next tick (`Rescheduler`).
package final class WorkerPool: Sendable {
    /// Threads running jobs.
    package let threads: Int
    /// Jobs waiting (or reserved) at most, besides those running.
    package let queueLimit: Int
    /// The nice value of the threads (0: the normal priority; up to 19, the lowest), each setting
    /// it when it starts.
    package let nice: Int32

    /// A job: what runs on a pool thread, returning what follows it (run at normal priority), if
    /// anything.
    typealias Job = @Sendable () -> (@Sendable () -> Void)?

    /// The queue and counts, guarded by `condition`: taken by normal-priority threads only (the
    /// callers, the foreman, and the threads of a pool at the normal priority, which wait on it).
    final class State: @unchecked Sendable {
        var jobs = RoundRobinQueue<Job>()
        var reserved = 0
        var running = 0
        var started = false
        var stopping = false
        var waiting: Int { jobs.count }
    }

    let state = State()
    let condition = Condition()
    let name: String
    /// Hands out the jobs and runs what follows them at the normal priority; `nil` for a pool at
    /// the normal priority (its threads take the jobs from the queue themselves, and run what
    /// follows each job after it).
    let foreman: Foreman?
    /// Gives the core back to the server's threads every millisecond while a low-priority pool's
    /// job runs; `nil` at nice 0.
    let rescheduler: Rescheduler?
    /// Called by a low-priority pool's thread after each job, before it tells the foreman (tests
    /// stop a thread there, as a preemption would).
    let afterJob: (@Sendable () -> Void)?

    /// A pool of `threads` threads (at least 1) named `name`, with room for `queueLimit` waiting
    /// jobs (at least 1), at `nice` (clamped to 0–19). The threads start with the first job; with
    /// a `nice` above 0, the foreman's thread and the rescheduler's start now, with the calling
    /// thread's priority (make the pool at start-up, not on a low-priority thread).
    package convenience init(threads: Int, queueLimit: Int, name: String = "appshell-workers", nice: Int32 = 0) {
        self.init(threads: threads, queueLimit: queueLimit, name: name, nice: nice, afterJob: nil)
    }

    init(threads: Int, queueLimit: Int, name: String, nice: Int32, afterJob: (@Sendable () -> Void)?) {
        self.threads = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.name = name
        self.nice = min(max(nice, 0), 19)
        self.afterJob = afterJob
        foreman = self.nice == 0 ? nil : Foreman(threads: max(1, threads))
        rescheduler =
            self.nice == 0 ? nil : Rescheduler(name: "\(name)-tick", periodMicroseconds: Self.reschedulingMicroseconds)
        if let foreman {
            let thread = BackgroundThread { [self] in supervise(foreman) }
            thread.name = "\(name)-foreman"
            thread.start()
        }
    }

    func locked<Result>(_ body: (State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(state)
    }

    /// A place in the queue for one job, in `lane` (every job in the same lane unless told);
    /// `nil` when the queue is full or the pool stopped.
    package func reserve(lane: String = "") -> Reservation? {
        let taken = locked { state -> Bool in
            guard !state.stopping, state.reserved + state.waiting < queueLimit else { return false }
            state.reserved += 1
            return true
        }
        return taken ? Reservation(pool: self, lane: lane) : nil
    }

    /// Queues `job` in `lane` if there is room; false (and `job` dropped) when the queue is full.
    @discardableResult
    package func submit(lane: String = "", _ job: @escaping @Sendable () -> Void) -> Bool {
        guard let reservation = reserve(lane: lane) else { return false }
        reservation.submit(job)
        return true
    }

    /// Jobs waiting or reserved now, not counting those running.
    package var queued: Int { locked { $0.reserved + $0.waiting } }

    /// Jobs running now.
    package var running: Int { locked { $0.running } }

    /// Stops taking jobs; the threads finish the jobs already queued (and what follows them) and
    /// exit.
    package func stop() {
        locked { $0.stopping = true }
        condition.broadcast()
        foreman?.wake.signal()
        rescheduler?.stop()
    }

    /// How often a low-priority pool's rescheduler wakes while a job runs, in microseconds.
    package static let reschedulingMicroseconds = 1000

    /// Fills a reserved place of `lane` with `job`, or gives it back (`nil`).
    fileprivate func fill(_ job: Job?, lane: String) {
        let startThreads = locked { state -> Bool in
            state.reserved -= 1
            guard let job, !state.stopping else { return false }
            state.jobs.append(job, lane: lane)
            if foreman == nil { condition.signal() }
            guard !state.started else { return false }
            state.started = true
            return true
        }
        foreman?.wake.signal()
        guard startThreads else { return }
        for index in 0..<threads {
            let worker = foreman?.workers[index]
            let thread = BackgroundThread { [self] in
                prioritize(warn: index == 0)
                if let worker { work(worker) } else { work() }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Sets the calling thread's nice value to the pool's (Linux keeps one per thread: the
    /// process's id 0 names the calling thread); a refusal (a seccomp profile that forbids it)
    /// leaves it as it was, said once per pool on standard error (by the first thread) since the
    /// jobs still run, only less politely.
    private func prioritize(warn: Bool) {
        guard nice != 0, setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) != 0, warn else { return }
        let reason = String(cString: strerror(errno))
        Logger.appshell.error("\(name) threads keep the normal priority (nice \(nice) refused: \(reason))")
    }

    /// A thread of a pool at the normal priority: takes the jobs from the queue itself.
    private func work() {
        while true {
            condition.lock()
            while state.waiting == 0 && !state.stopping { condition.wait() }
            guard let job = state.jobs.popFirst() else {
                condition.unlock()
                return
            }
            state.running += 1
            condition.unlock()
            job()?()
            locked { $0.running -= 1 }
        }
    }

    /// One job's place in a pool's queue: `submit` fills it; dropped unused, it is given back.
    package final class Reservation: Sendable {
        private let pool: WorkerPool
        /// The lane the job waits in.
        package let lane: String
        private let used = Locked(false)

        fileprivate init(pool: WorkerPool, lane: String) {
            self.pool = pool
            self.lane = lane
        }

        /// Queues `job` in the reserved place (once; later calls do nothing). A pool that stopped
        /// meanwhile drops it.
        package func submit(_ job: @escaping @Sendable () -> Void) {
            if take() {
                pool.fill(
                    {
                        job()
                        return nil
                    }, lane: lane)
            }
        }

        /// Queues `job` in the reserved place (once), and then `finish` with its result at the
        /// normal priority: on the pool's foreman thread when the pool runs below it, else on the
        /// job's thread. Take locks that other requests wait for in `finish`, never in `job`.
        package func submit<Result: Sendable>(
            _ job: @escaping @Sendable () -> Result, then finish: @escaping @Sendable (Result) -> Void
        ) {
            if take() {
                pool.fill(
                    {
                        let result = job()
                        return { finish(result) }
                    }, lane: lane)
            }
        }

        /// Gives the place back without a job.
        package func cancel() {
            if take() { pool.fill(nil, lane: lane) }
        }

        private func take() -> Bool {
            used.withLock { used in
                defer { used = true }
                return !used
            }
        }

        deinit { cancel() }
    }
}
