import AppShellConcurrency
import Glibc

/// Where the tasks of actions that await work run (`RootController.awaiting`): a task executor
/// of a few threads of the shell's own, preferred by each action's task, so that its work and
/// every continuation after an `await` run here — not on libmicrohttpd's event loops, nor on the
/// global cooperative pool.
///
/// DESIGN: the second half of an action enters the session's lock and may wait for its commit
/// (`SessionRegistry.withLiveSession` blocks): a thread that may block is needed. The global
/// pool has one thread per core, and code that blocks one of them (a synchronous test, a driver)
/// held up every action's task there — with two cores, two such callers stopped them all. These
/// threads are started with the first task, and stay: one process-wide executor, like
/// `Resumptions.shared`.
final class ActionExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `started` are used under `condition`'s lock only.

    /// The executor every shell's actions run on.
    static let shared = ActionExecutor(threads: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private let condition = Condition()
    private var jobs = FIFOQueue<UnownedJob>()
    private var started = false
    private let threads: Int

    /// An executor of `threads` threads, started with its first job.
    init(threads: Int) { self.threads = threads }

    /// Queues `job` to run on one of the threads.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        if start {
            for index in 0..<threads {
                let thread = BackgroundThread { [self] in work() }
                thread.name = "appshell-actions-\(index)"
                thread.start()
            }
        }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.popFirst()
            condition.unlock()
            job?.runSynchronously(on: executor)
        }
    }
}
