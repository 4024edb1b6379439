import Dispatch
import Testing

@testable import AppShellConcurrency

/// Lanes served in turns: in a queue and in a worker pool's, a lane with many jobs waiting delays
/// another lane's next one by at most one of its own, and each lane keeps its order. (Before, the
/// pool's queue was first come, first served: the check of a network that came last waited behind
/// every check queued before it.)
@Suite struct RoundRobinQueueTests {
    @Test func lanesTakeTurnsAndEachKeepsItsOrder() {
        var queue = RoundRobinQueue<String>()
        for index in 1...4 { queue.append("a\(index)", lane: "a") }
        queue.append("b1", lane: "b")
        queue.append("b2", lane: "b")
        queue.append("c1", lane: "c")
        #expect(queue.count == 7)
        var taken: [String] = []
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == ["a1", "b1", "c1", "a2", "b2", "a3", "a4"])
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }

    @Test func aLaneThatEmptiedComesBackAfterTheLanesWaiting() {
        var queue = RoundRobinQueue<String>()
        queue.append("a1", lane: "a")
        queue.append("b1", lane: "b")
        #expect(queue.popFirst() == "a1")
        // Lane a had nothing left: its new element goes after b's turn.
        queue.append("a2", lane: "a")
        queue.append("b2", lane: "b")
        var taken: [String] = []
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == ["b1", "a2", "b2"])
    }

    /// The order a pool of one thread at `nice` runs jobs queued (while its thread is held by
    /// a first job) in lane `a` four times, then in lane `b` once.
    static func order(at nice: Int32) throws -> [String] {
        let pool = WorkerPool(threads: 1, queueLimit: 8, name: "appshell-test-lanes", nice: nice)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        try #require(
            pool.submit(lane: "first") {
                started.signal()
                gate.wait()
            })
        // The first job runs: what follows waits in the queue.
        #expect(started.wait(timeout: .now() + .seconds(60)) == .success)
        for name in ["a1", "a2", "a3", "a4", "b1"] {
            let reservation = try #require(pool.reserve(lane: String(name.prefix(1))))
            #expect(reservation.lane == String(name.prefix(1)))
            reservation.submit {
                order.withLock { $0.append(name) }
                done.signal()
            }
        }
        gate.signal()
        for _ in 0..<5 { #expect(done.wait(timeout: .now() + .seconds(60)) == .success) }
        return order.withLock { $0 }
    }

    /// At nice 0 the threads take the jobs themselves; above, the foreman hands them out.
    @Test(arguments: [0, 19] as [Int32])
    func aPoolServesItsLanesInTurns(nice: Int32) throws {
        #expect(try Self.order(at: nice) == ["a1", "b1", "a2", "a3", "a4"])
    }
}
