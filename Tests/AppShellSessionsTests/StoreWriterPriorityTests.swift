import AppShellConcurrency
import AppShellSessions
import Glibc
import Synchronization
import Testing

/// The store writer's thread runs with the priority of the thread that made the writer, whatever
/// thread writes first.
@Suite struct StoreWriterPriorityTests {
    /// Before: the thread started at the first write and inherited that thread's policy. A login's
    /// write came from the password-check pool, which ran as `SCHED_IDLE`: the writer ran as
    /// `SCHED_IDLE` for good (this test saw it), and under a flood every action waited for it.
    @Test func aFirstWriteFromAnIdleThreadLeavesTheWriterNormal() throws {
        #expect(sched_getscheduler(0) == 0)  // SCHED_OTHER
        let writer = StoreWriter(backend: MemoryDefaultsBackend(), queueLimit: 8)
        defer { writer.stop() }
        let seen = Mutex<Int32?>(nil)
        let done = Condition()
        let thread = BackgroundThread {
            // A thread that lowered itself to SCHED_IDLE (5), as a low-priority pool's would.
            var parameters = sched_param()
            #expect(sched_setscheduler(0, 5, &parameters) == 0)
            let record = SessionRecord(values: ["user": .string("ann")], created: 1, accessed: 1)
            let queued = writer.submit([.save(SessionID.random(), record)]) { error in
                #expect(error == nil)
                // The completion runs on the writer's thread: SCHED_BATCH (3), never SCHED_IDLE.
                seen.withLock { $0 = sched_getscheduler(0) }
                done.lock()
                done.broadcast()
                done.unlock()
            }
            #expect(queued)
        }
        thread.start()
        done.lock()
        while seen.withLock({ $0 }) == nil { _ = done.wait(milliseconds: 100) }
        done.unlock()
        #expect(seen.withLock { $0 } == 3)
    }

    /// The writer runs as `SCHED_BATCH` (its wake-ups do not preempt the server's threads, so
    /// the writes of the requests a server thread handles in one turn make one transaction) at
    /// the nice value of a normal thread. Before, it ran as `SCHED_OTHER` (policy 0), and with
    /// the server pinned to one core 85 % of its transactions carried a single write.
    @Test func theWriterRunsAsABatchThreadAtNormalNice() throws {
        let writer = StoreWriter(backend: MemoryDefaultsBackend(), queueLimit: 8)
        defer { writer.stop() }
        let seen = Mutex<(policy: Int32, nice: Int32)?>(nil)
        let done = Condition()
        let queued = writer.submit([.touch(SessionID.random(), accessed: 1)]) { error in
            #expect(error == nil)
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            seen.withLock { $0 = (sched_getscheduler(0), errno == 0 ? nice : -100) }
            done.lock()
            done.broadcast()
            done.unlock()
        }
        #expect(queued)
        done.lock()
        while seen.withLock({ $0 }) == nil { _ = done.wait(milliseconds: 100) }
        done.unlock()
        let observed = try #require(seen.withLock { $0 })
        #expect(observed.policy == 3)  // SCHED_BATCH
        #expect(observed.nice == 0)
        // The thread that made the writer keeps its own policy.
        #expect(sched_getscheduler(0) == 0)
    }
}
