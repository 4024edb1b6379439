import AppShellConcurrency
import Dispatch
import Testing

/// What follows a job of a low-priority pool (`Reservation.submit(_:then:)`) runs at the normal
/// priority, in order, and still runs when the pool stops meanwhile.
@Suite struct WorkerPoolFinisherTests {
    /// The priorities a job and its finish ran with in a pool of `priority`.
    static func observed(in priority: ThreadPriority) throws -> (job: ThreadPriority, finish: ThreadPriority) {
        let pool = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-finisher", priority: priority)
        defer { pool.stop() }
        let seen = Locked<(job: ThreadPriority, finish: ThreadPriority)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let reservation = try #require(pool.reserve())
        reservation.submit {
            ThreadPriority.currentThread
        } then: { job in
            seen.withLock { $0 = (job, ThreadPriority.currentThread) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        return try #require(seen.withLock { $0 })
    }

    @Test(arguments: ThreadPriority.allCases)
    func theJobKeepsThePoolsPriorityAndItsFinishRunsAtNormal(priority: ThreadPriority) throws {
        let seen = try Self.observed(in: priority)
        #expect(seen.job == priority)
        #expect(seen.finish == .normal)
    }

    @Test func finishesRunInTheOrderTheirJobsEndedAndStillRunAfterStop() throws {
        let pool = WorkerPool(threads: 1, queueLimit: 8, name: "appshell-test-finisher", priority: .idle)
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<3 {
            let reservation = try #require(pool.reserve())
            reservation.submit {
                if index == 0 { gate.wait() }
                return index
            } then: { index in
                order.withLock { $0.append(index) }
                done.signal()
            }
        }
        // Stopped while the first job runs: the queued jobs and every finish still run.
        pool.stop()
        gate.signal()
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + .seconds(60)) == .success) }
        #expect(order.withLock { $0 } == [0, 1, 2])
        #expect(pool.reserve() == nil)
    }
}
