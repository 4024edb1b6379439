import AppShellConcurrency
import Dispatch
import Glibc
import Testing

/// A worker pool's threads take the priority asked for, and only they: the thread that made the
/// pool keeps its own.
@Suite struct ThreadPriorityTests {
    /// The priority a job of a pool with `priority` runs with, waiting up to a minute.
    static func observed(in priority: ThreadPriority) throws -> ThreadPriority {
        let pool = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-priority", priority: priority)
        defer { pool.stop() }
        let seen = Locked<ThreadPriority?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            pool.submit {
                seen.withLock { $0 = ThreadPriority.currentThread }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        return try #require(seen.withLock { $0 })
    }

    @Test(arguments: ThreadPriority.allCases)
    func aPoolsThreadsRunWithItsPriority(priority: ThreadPriority) throws {
        #expect(try Self.observed(in: priority) == priority)
        #expect(ThreadPriority.currentThread == .normal)
    }

    @Test func idleIsLinuxsIdlePolicyAndLowIsNiceNineteen() throws {
        let pool = WorkerPool(threads: 2, queueLimit: 2, name: "appshell-test-priority", priority: .idle)
        defer { pool.stop() }
        let seen = Locked<(policy: Int32, nice: Int32)?>(nil)
        let done = DispatchSemaphore(value: 0)
        pool.submit {
            let policy = sched_getscheduler(0)
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            seen.withLock { $0 = (policy, nice) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        let observed = try #require(seen.withLock { $0 })
        #expect(observed.policy == 5)  // SCHED_IDLE
        let low = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-priority", priority: .low)
        defer { low.stop() }
        let nice = Locked<Int32?>(nil)
        low.submit {
            nice.withLock { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(nice.withLock { $0 } == 19)
        #expect(sched_getscheduler(0) == 0)  // SCHED_OTHER: the test's thread is untouched
    }
}
