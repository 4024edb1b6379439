import AppShellConcurrency
import AppShellSessions
import Synchronization
import Testing

/// The store writer's thread runs with the priority of the thread that made the writer, whatever
/// thread writes first.
@Suite struct StoreWriterPriorityTests {
    /// Before: the thread started at the first write and inherited that thread's policy. A login's
    /// write comes from the password-check pool, which runs as `SCHED_IDLE`: the writer ran as
    /// `SCHED_IDLE` for good (this test saw `.idle`), and under a flood every action waited for it.
    @Test func aFirstWriteFromAnIdleThreadLeavesTheWriterNormal() throws {
        #expect(ThreadPriority.currentThread == .normal)
        let writer = StoreWriter(backend: MemoryDefaultsBackend(), queueLimit: 8)
        defer { writer.stop() }
        let seen = Mutex<ThreadPriority?>(nil)
        let done = Condition()
        let thread = BackgroundThread {
            // Like a password-check pool thread (ThreadPriority.idle is its default).
            #expect(ThreadPriority.idle.applyToCurrentThread())
            let record = SessionRecord(values: ["user": .string("ann")], created: 1, accessed: 1)
            let queued = writer.submit([.save(SessionID.random(), record)]) { error in
                #expect(error == nil)
                // The completion runs on the writer's thread.
                seen.withLock { $0 = ThreadPriority.currentThread }
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
        #expect(seen.withLock { $0 } == .normal)
    }
}
