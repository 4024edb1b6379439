import AppShellAuth
import Synchronization
import Testing

/// A clock the test moves by hand, in seconds.
final class ManualClock: Sendable {
    private let seconds = Atomic<Int64>(1_000_000)

    var now: Int64 { seconds.load(ordering: .relaxed) }

    func advance(by delta: Int64) {
        seconds.add(delta, ordering: .relaxed)
    }
}

/// The login rate limiter, driven by a manual clock.
@Suite struct LoginRateLimiterTests {
    let clock = ManualClock()

    func makeLimiter(maxTrackedKeys: Int = 100_000) -> LoginRateLimiter {
        let clock = clock
        return LoginRateLimiter(maxTrackedKeys: maxTrackedKeys, clock: { clock.now })
    }

    @Test func fiveFailuresAreAllowedAndTheSixthAttemptIsRefused() {
        let limiter = makeLimiter()
        let keys = ["session:s1", "ip:10.0.0.1"]
        for _ in 1...5 {
            #expect(!limiter.isBlocked(keys: keys))
            limiter.recordFailure(keys: keys)
            clock.advance(by: 1)
        }
        #expect(limiter.isBlocked(keys: keys))
    }

    @Test func failuresOnTheIPBlockAFreshSessionFromThatIP() {
        let limiter = makeLimiter()
        for index in 1...5 {
            limiter.recordFailure(keys: ["session:s\(index)", "ip:10.0.0.1"])
        }
        #expect(limiter.isBlocked(keys: ["session:new", "ip:10.0.0.1"]))
        #expect(!limiter.isBlocked(keys: ["session:new", "ip:10.0.0.2"]))
        #expect(!limiter.isBlocked(keys: ["session:s1"]))
    }

    @Test func failuresOnTheSessionBlockItFromAnotherIP() {
        let limiter = makeLimiter()
        for index in 1...5 {
            limiter.recordFailure(keys: ["session:s1", "ip:10.0.0.\(index)"])
        }
        #expect(limiter.isBlocked(keys: ["session:s1", "ip:10.0.0.99"]))
        #expect(!limiter.isBlocked(keys: ["session:s2", "ip:10.0.0.1"]))
    }

    @Test func aKeyGivenTwiceCountsOnce() {
        let limiter = makeLimiter()
        for _ in 1...3 {
            limiter.recordFailure(keys: ["ip:10.0.0.1", "ip:10.0.0.1"])
        }
        #expect(!limiter.isBlocked(keys: ["ip:10.0.0.1"]))
    }

    @Test func blockLiftsOnceTheOldestFailureLeavesTheWindow() {
        let limiter = makeLimiter()
        limiter.recordFailure(keys: ["ip:a"])  // at t0
        clock.advance(by: 30)
        for _ in 1...4 {
            limiter.recordFailure(keys: ["ip:a"])  // at t0 + 30
        }
        clock.advance(by: 29)  // t0 + 59: all five still within the minute
        #expect(limiter.isBlocked(keys: ["ip:a"]))
        clock.advance(by: 1)  // t0 + 60: the first one has left
        #expect(!limiter.isBlocked(keys: ["ip:a"]))
        limiter.recordFailure(keys: ["ip:a"])  // five again within the minute
        #expect(limiter.isBlocked(keys: ["ip:a"]))
        clock.advance(by: 60)
        #expect(!limiter.isBlocked(keys: ["ip:a"]))
        #expect(limiter.trackedKeyCount == 0)
    }

    @Test func failuresSpreadOverMoreThanAMinuteNeverBlock() {
        let limiter = makeLimiter()
        for _ in 1...20 {
            #expect(!limiter.isBlocked(keys: ["ip:slow"]))
            limiter.recordFailure(keys: ["ip:slow"])
            clock.advance(by: 13)
        }
    }

    @Test func resetClearsOnlyTheKeysGiven() {
        let limiter = makeLimiter()
        for _ in 1...5 {
            limiter.recordFailure(keys: ["session:s1", "ip:10.0.0.1"])
        }
        limiter.reset(keys: ["session:s1"])
        #expect(!limiter.isBlocked(keys: ["session:s1"]))
        #expect(limiter.isBlocked(keys: ["ip:10.0.0.1"]))
        #expect(limiter.trackedKeyCount == 1)
        limiter.recordFailure(keys: ["session:s1"])
        #expect(!limiter.isBlocked(keys: ["session:s1"]))
    }

    @Test func expiredKeysAreForgotten() {
        let limiter = makeLimiter()
        for index in 0..<100 {
            limiter.recordFailure(keys: ["ip:\(index)"])
        }
        #expect(limiter.trackedKeyCount == 100)
        clock.advance(by: 59)
        limiter.recordFailure(keys: ["ip:late"])
        #expect(limiter.trackedKeyCount == 101)
        clock.advance(by: 1)
        #expect(limiter.trackedKeyCount == 1)
        clock.advance(by: 59)
        #expect(limiter.trackedKeyCount == 0)
    }

    @Test func trackedKeysStayWithinTheCapAndTheOldestAreDropped() {
        let cap = 1_000
        let limiter = makeLimiter(maxTrackedKeys: cap)
        for _ in 1...5 {
            limiter.recordFailure(keys: ["ip:first"])
        }
        #expect(limiter.isBlocked(keys: ["ip:first"]))
        for index in 0..<(cap + 500) {
            limiter.recordFailure(keys: ["ip:rotating-\(index)"])
            #expect(limiter.trackedKeyCount <= cap)
        }
        #expect(limiter.trackedKeyCount == cap)
        // The least recently failing keys went first: the earliest rotating ones and "ip:first".
        #expect(!limiter.isBlocked(keys: ["ip:first"]))
        for _ in 1...4 {
            limiter.recordFailure(keys: ["ip:rotating-\(cap + 499)"])
        }
        #expect(limiter.isBlocked(keys: ["ip:rotating-\(cap + 499)"]))
    }

    @Test func oneKeyFailingForeverKeepsMemoryBounded() {
        let limiter = makeLimiter(maxTrackedKeys: 10)
        for _ in 1...10_000 {
            limiter.recordFailure(keys: ["ip:hammer"])
        }
        #expect(limiter.isBlocked(keys: ["ip:hammer"]))
        #expect(limiter.trackedKeyCount == 1)
    }

    @Test func concurrentUseIsSafe() async {
        let limiter = makeLimiter(maxTrackedKeys: 500)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 {
                        let keys = ["ip:\(worker)-\(index % 300)", "session:\(index)"]
                        if !limiter.isBlocked(keys: keys) {
                            limiter.recordFailure(keys: keys)
                        }
                    }
                }
            }
        }
        #expect(limiter.trackedKeyCount <= 500)
        #expect(limiter.trackedKeyCount > 0)
    }
}
