import Dispatch
import Glibc
import Testing

@testable import AppShellConcurrency

/// A low-priority pool's foreman: what follows a job (`Reservation.submit(_:then:)`) runs at the
/// normal priority, in order with one thread, and still runs when the pool stops meanwhile; and
/// the pool's threads take no lock that anyone else waits for.
@Suite struct WorkerPoolForemanTests {
    /// The calling thread's nice value (Linux keeps one per thread).
    static var currentNice: Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    /// The nice values a job and its finish ran with in a pool at `nice`.
    static func observed(at nice: Int32) throws -> (job: Int32, finish: Int32) {
        let pool = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-foreman", nice: nice)
        defer { pool.stop() }
        let seen = Locked<(job: Int32, finish: Int32)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let reservation = try #require(pool.reserve())
        reservation.submit {
            Self.currentNice
        } then: { job in
            seen.withLock { $0 = (job, Self.currentNice) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        return try #require(seen.withLock { $0 })
    }

    /// The pool's threads take its nice value, and only they: the thread that made the pool, and
    /// what follows each job, keep the normal one.
    @Test(arguments: [0, 6, 19] as [Int32])
    func theJobKeepsThePoolsNiceAndItsFinishRunsAtNormal(nice: Int32) throws {
        let seen = try Self.observed(at: nice)
        #expect(seen.job == nice)
        #expect(seen.finish == 0)
        #expect(Self.currentNice == 0)
        #expect(sched_getscheduler(0) == 0)  // SCHED_OTHER: the test's thread is untouched
    }

    /// A low-priority pool has a rescheduler (its tick every millisecond while a job runs); a pool
    /// at nice 0 has neither it nor a foreman.
    @Test func onlyALowPriorityPoolHasAReschedulerAndAForeman() {
        let low = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-foreman", nice: 6)
        defer { low.stop() }
        #expect(low.rescheduler != nil && low.foreman != nil)
        let normal = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-foreman")
        defer { normal.stop() }
        #expect(normal.rescheduler == nil && normal.foreman == nil)
    }

    @Test func finishesRunInTheOrderTheirJobsEndedAndStillRunAfterStop() throws {
        let pool = WorkerPool(threads: 1, queueLimit: 8, name: "appshell-test-foreman", nice: 19)
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

    /// A pool thread that stops right after its job — as a preempted low-priority thread does,
    /// until the kernel gives it the core again — holds up no one: callers reserve, submit and count,
    /// the pool's other thread runs the jobs queued meanwhile, and what follows them runs. (Before,
    /// the threads took the queue's lock to end a job and take the next: stopped there, they held
    /// up every caller, an event loop reserving a place for a login among them.)
    @Test func aThreadStoppedAfterItsJobHoldsUpNoOne() throws {
        let stopped = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let pool = WorkerPool(
            threads: 2, queueLimit: 8, name: "appshell-test-foreman", nice: 19,
            afterJob: {
                let isFirst = first.withLock { first in
                    defer { first = false }
                    return first
                }
                guard isFirst else { return }
                stopped.signal()
                resume.wait()
            })
        defer { pool.stop() }
        let finishes = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        @Sendable func submit(_ index: Int) throws {
            let reservation = try #require(pool.reserve())
            reservation.submit {
                index
            } then: { index in
                finishes.withLock { $0.append(index) }
                done.signal()
            }
        }
        try submit(0)
        #expect(stopped.wait(timeout: .now() + .seconds(60)) == .success)
        // Job 0's thread stands still after its job, before telling the foreman. The calls are
        // made on a thread of their own, so that a call held up fails the test instead of
        // hanging it.
        let called = DispatchSemaphore(value: 0)
        let running = Locked<Int?>(nil)
        DispatchQueue.global().async {
            for index in 1...4 { try? submit(index) }
            running.withLock { $0 = pool.running }
            called.signal()
        }
        guard called.wait(timeout: .now() + .seconds(60)) == .success else {
            Issue.record("reserving, submitting or counting waited for the stopped thread")
            resume.signal()
            return
        }
        // The stopped thread's job counts as running until its thread tells the foreman it ended.
        #expect((1...2).contains(running.withLock { $0 } ?? 0))
        for _ in 1...4 { #expect(done.wait(timeout: .now() + .seconds(60)) == .success) }
        #expect(finishes.withLock { $0 } == [1, 2, 3, 4])
        #expect(pool.queued == 0)
        resume.signal()
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(finishes.withLock { $0 } == [1, 2, 3, 4, 0])
        #expect(pool.running == 0)
    }
}
