import AppShell
import AppShellConcurrency
import Dispatch
import Glibc
import Testing

/// The shell's scheduler on the server's shared timer queue: it counts and drops only its own
/// entries, converts the shell's deadlines to the queue's clock, and `stop` waits for an entry
/// that is running.
@Suite struct ShellSchedulerTests {
    /// The shell's clock (milliseconds since 1970) and the queue's (monotonic), far apart.
    static let shellStart: Int64 = 1_800_000_000_000

    static func make() -> (ShellScheduler, TimerQueue, Locked<Int64>) {
        let queueTime = Locked<Int64>(0)
        let timers = TimerQueue(name: "test-timers") { queueTime.withLock { $0 } }
        timers.start()
        // The shell's clock moves with the queue's, as the wall clock moves with the monotonic one.
        let scheduler = ShellScheduler(clock: { Self.shellStart + queueTime.withLock { $0 } }, timers: timers)
        return (scheduler, timers, queueTime)
    }

    static func advance(_ timers: TimerQueue, _ time: Locked<Int64>, to milliseconds: Int64) {
        time.withLock { $0 = milliseconds }
        timers.wake()
        let ran = DispatchSemaphore(value: 0)
        timers.schedule(at: milliseconds) { ran.signal() }
        #expect(ran.wait(timeout: .now() + .seconds(30)) == .success)
    }

    @Test func onASharedQueueItRunsCountsAndDropsOnlyItsOwnEntries() {
        let (scheduler, timers, time) = Self.make()
        defer { timers.stop() }
        let ran = Locked<[String]>([])
        timers.schedule(at: 50) { ran.withLock { $0.append("other") } }
        scheduler.schedule(at: Self.shellStart + 100) { ran.withLock { $0.append("reminder") } }
        scheduler.schedule(at: Self.shellStart + 300) { ran.withLock { $0.append("later") } }
        #expect(scheduler.pendingCount == 2)
        #expect(timers.pendingCount == 3)
        Self.advance(timers, time, to: 99)
        #expect(ran.withLock { $0 } == ["other"])
        Self.advance(timers, time, to: 100)
        #expect(ran.withLock { $0 } == ["other", "reminder"])
        #expect(scheduler.pendingCount == 1)
        // Stopped: its entry is dropped, the shared queue runs on for the others.
        scheduler.stop()
        #expect(scheduler.pendingCount == 0)
        #expect(timers.pendingCount == 0)
        #expect(timers.isRunning)
        Self.advance(timers, time, to: 300)
        #expect(ran.withLock { $0 } == ["other", "reminder"])
    }

    @Test func stopWaitsForTheEntryRunningNow() {
        let (scheduler, timers, time) = Self.make()
        defer { timers.stop() }
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        scheduler.schedule(at: Self.shellStart + 10) {
            started.signal()
            gate.wait()
            usleep(20_000)
            finished.withLock { $0 = true }
        }
        time.withLock { $0 = 10 }
        timers.wake()
        #expect(started.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(scheduler.pendingCount == 0)
        let stopped = DispatchSemaphore(value: 0)
        let sawFinished = Locked<Bool?>(nil)
        let stopper = BackgroundThread {
            scheduler.stop()
            sawFinished.withLock { $0 = finished.withLock { $0 } }
            stopped.signal()
        }
        stopper.start()
        gate.signal()
        #expect(stopped.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(sawFinished.withLock { $0 } == true)
    }

    /// The two clocks are read to the millisecond, so a delay on the queue's may end before the
    /// deadline on the shell's, where the work itself checks it (the splash's `advance(now:)`):
    /// the entry runs only once the shell's clock has reached its deadline.
    @Test func anEntryNeverRunsBeforeItsDeadlineOnTheShellsClock() {
        let queueTime = Locked<Int64>(0)
        let timers = TimerQueue(name: "test-timers") { queueTime.withLock { $0 } }
        timers.start()
        defer { timers.stop() }
        let shellTime = Locked<Int64>(Self.shellStart)
        let scheduler = ShellScheduler(clock: { shellTime.withLock { $0 } }, timers: timers)
        let ranAt = Locked<Int64?>(nil)
        scheduler.schedule(at: Self.shellStart + 100) { ranAt.withLock { $0 = shellTime.withLock { $0 } } }
        // The queue's delay has passed; the shell's clock is a millisecond behind.
        shellTime.withLock { $0 = Self.shellStart + 99 }
        Self.advance(timers, queueTime, to: 100)
        #expect(ranAt.withLock { $0 } == nil)
        #expect(scheduler.pendingCount == 1)
        shellTime.withLock { $0 = Self.shellStart + 100 }
        Self.advance(timers, queueTime, to: 101)
        #expect(ranAt.withLock { $0 } == Self.shellStart + 100)
        #expect(scheduler.pendingCount == 0)
    }

    /// With no shared queue, the scheduler runs a queue of its own on the shell's clock, started
    /// and stopped with it.
    @Test func onItsOwnQueueItRunsOnTheShellsClock() {
        let now = Locked<Int64>(Self.shellStart)
        let scheduler = ShellScheduler(clock: { now.withLock { $0 } })
        let ran = DispatchSemaphore(value: 0)
        scheduler.schedule(at: Self.shellStart + 500) { ran.signal() }
        scheduler.start()
        defer { scheduler.stop() }
        #expect(scheduler.pendingCount == 1)
        now.withLock { $0 = Self.shellStart + 500 }
        // Its thread reads the clock again within `TimerQueue.longestSleep`.
        #expect(ran.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(scheduler.pendingCount == 0)
    }
}
