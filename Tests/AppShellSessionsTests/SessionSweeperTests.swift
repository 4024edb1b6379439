import AppShellConcurrency
import AppShellSessions
import Dispatch
import Testing

/// The sweeper on the server's shared timer queue: it sweeps at its interval on the queue's
/// thread, and stopping it leaves the queue running for the others.
@Suite struct SessionSweeperTests {
    /// Runs a marker at `time` on `timers` and waits for it: what was due by then has run.
    static func drain(_ timers: TimerQueue, through time: Int64) {
        let ran = DispatchSemaphore(value: 0)
        timers.schedule(at: time) { ran.signal() }
        #expect(ran.wait(timeout: .now() + .seconds(30)) == .success)
    }

    @Test func theSweeperSweepsAtItsIntervalOnASharedQueue() throws {
        let (registry, _, clock) = SessionRegistryTests.make {
            $0.idleTimeoutSeconds = 100
            $0.sweepIntervalSeconds = 60
        }
        let queueTime = Locked<Int64>(0)
        let timers = TimerQueue(name: "test-timers") { queueTime.withLock { $0 } }
        timers.start()
        defer { timers.stop() }
        registry.startSweeper(timers: timers)
        _ = try registry.withSession(presentedID: nil) { _ in }
        #expect(registry.count == 1)
        #expect(timers.pendingCount == 1)
        clock.advance(200)
        // Not yet its interval (60 s on the queue's clock): nothing swept.
        queueTime.withLock { $0 = 59_999 }
        timers.wake()
        Self.drain(timers, through: 59_999)
        #expect(registry.count == 1)
        queueTime.withLock { $0 = 60_000 }
        timers.wake()
        Self.drain(timers, through: 60_000)
        #expect(registry.count == 0)
        // Stopped: its timer is gone from the shared queue, which still runs.
        registry.stopSweeper()
        #expect(timers.pendingCount == 0)
        #expect(timers.isRunning)
        _ = try registry.withSession(presentedID: nil) { _ in }
        clock.advance(200)
        queueTime.withLock { $0 = 200_000 }
        timers.wake()
        Self.drain(timers, through: 200_000)
        #expect(registry.count == 1)
    }
}
