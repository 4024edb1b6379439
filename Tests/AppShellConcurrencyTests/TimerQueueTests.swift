import AppShellConcurrency
import Dispatch
import Glibc
import Testing

/// A clock the test moves, in milliseconds.
final class ManualClock: Sendable {
    private let time: Locked<Int64>

    init(_ start: Int64 = 0) { time = Locked(start) }

    var reading: @Sendable () -> Int64 { { [time] in time.withLock { $0 } } }

    /// Moves the clock to `milliseconds` and wakes `timers` to read it.
    func set(_ milliseconds: Int64, waking timers: TimerQueue) {
        time.withLock { $0 = milliseconds }
        timers.wake()
    }
}

/// One timer thread for everything the server does at a time: deadline order, repeating work,
/// cancelling, starting and stopping — with a clock the tests move, so nothing depends on how fast
/// the machine is.
@Suite struct TimerQueueTests {
    /// A deadline 30 s from now, made at each wait (a `static let` was one instant for the whole
    /// process: waits of tests that ran 30 s after the first had already passed it).
    static var patience: DispatchTime { .now() + .seconds(30) }

    /// A started queue on a clock at 0.
    static func start() -> (TimerQueue, ManualClock) {
        let clock = ManualClock()
        let timers = TimerQueue(name: "test-timers", clock: clock.reading)
        timers.start()
        return (timers, clock)
    }

    /// Waits until everything due by `time` on `timers` has run (work runs in deadline order on one
    /// thread, so a marker scheduled at `time` runs after it).
    static func drain(_ timers: TimerQueue, through time: Int64) {
        let ran = DispatchSemaphore(value: 0)
        timers.schedule(at: time) { ran.signal() }
        #expect(ran.wait(timeout: .now() + .seconds(30)) == .success)
    }

    @Test func workRunsInDeadlineOrderAndInScheduledOrderForEqualDeadlines() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let order = Locked<[String]>([])
        for (name, deadline) in [("c", 30), ("a", 10), ("b1", 20), ("b2", 20), ("d", 40)] {
            timers.schedule(at: Int64(deadline)) { order.withLock { $0.append(name) } }
        }
        #expect(timers.pendingCount == 5)
        clock.set(30, waking: timers)
        Self.drain(timers, through: 30)
        #expect(order.withLock { $0 } == ["a", "b1", "b2", "c"])
        #expect(timers.pendingCount == 1)
        clock.set(40, waking: timers)
        Self.drain(timers, through: 40)
        #expect(order.withLock { $0 } == ["a", "b1", "b2", "c", "d"])
        #expect(timers.pendingCount == 0)
    }

    @Test func nothingRunsBeforeItsDeadline() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let ran = Locked(false)
        timers.schedule(at: 50) { ran.withLock { $0 = true } }
        clock.set(49, waking: timers)
        Self.drain(timers, through: 49)
        #expect(!ran.withLock { $0 })
        clock.set(50, waking: timers)
        Self.drain(timers, through: 50)
        #expect(ran.withLock { $0 })
    }

    @Test func aCancelledTimerDoesNotRun() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let ran = Locked<[String]>([])
        let cancelled = timers.schedule(at: 10) { ran.withLock { $0.append("cancelled") } }
        timers.schedule(at: 10) { ran.withLock { $0.append("kept") } }
        #expect(timers.cancel(cancelled))
        #expect(!timers.cancel(cancelled))
        #expect(timers.pendingCount == 1)
        clock.set(10, waking: timers)
        Self.drain(timers, through: 10)
        #expect(ran.withLock { $0 } == ["kept"])
    }

    @Test func manyCancelledTimersLeaveTheOthersInOrder() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let order = Locked<[Int]>([])
        // Enough cancelled far deadlines that the heap is rebuilt without them.
        let far = (0..<500).map { index in timers.schedule(at: 1_000_000 + Int64(index)) {} }
        for index in [3, 1, 2] { timers.schedule(at: Int64(index)) { order.withLock { $0.append(index) } } }
        for timer in far { timers.cancel(timer) }
        #expect(timers.pendingCount == 3)
        clock.set(3, waking: timers)
        Self.drain(timers, through: 3)
        #expect(order.withLock { $0 } == [1, 2, 3])
    }

    @Test func aRepeatingTimerRunsEveryIntervalUntilCancelled() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let runs = Locked(0)
        let timer = timers.schedule(every: 10) { runs.withLock { $0 += 1 } }
        for (time, expected) in [(9, 0), (10, 1), (19, 1), (20, 2), (30, 3)] {
            clock.set(Int64(time), waking: timers)
            Self.drain(timers, through: Int64(time))
            #expect(runs.withLock { $0 } == expected, "at \(time)")
        }
        #expect(timers.pendingCount == 1)
        #expect(timers.cancel(timer))
        clock.set(50, waking: timers)
        Self.drain(timers, through: 50)
        #expect(runs.withLock { $0 } == 3)
        #expect(timers.pendingCount == 0)
    }

    @Test func aRepeatingTimerThatFellBehindDoesNotMakeUpTheRunsItMissed() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let runs = Locked(0)
        timers.schedule(every: 10, startingAt: 10) { runs.withLock { $0 += 1 } }
        // Four intervals pass at once: one run, not four; the next is an interval later.
        clock.set(45, waking: timers)
        Self.drain(timers, through: 45)
        #expect(runs.withLock { $0 } == 1)
        clock.set(54, waking: timers)
        Self.drain(timers, through: 54)
        #expect(runs.withLock { $0 } == 1)
        clock.set(55, waking: timers)
        Self.drain(timers, through: 55)
        #expect(runs.withLock { $0 } == 2)
    }

    /// Work that runs long delays what falls due meanwhile, which then runs in deadline order —
    /// including work scheduled during it with an earlier deadline than what was already due.
    @Test func workThatRunsLongDoesNotBreakTheOrderOfLaterDeadlines() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let order = Locked<[String]>([])
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        timers.schedule(at: 10) {
            started.signal()
            gate.wait()
            order.withLock { $0.append("long") }
        }
        clock.set(10, waking: timers)
        #expect(started.wait(timeout: Self.patience) == .success)
        timers.schedule(at: 30) { order.withLock { $0.append("30") } }
        timers.schedule(at: 20) { order.withLock { $0.append("20") } }
        clock.set(100, waking: timers)
        timers.schedule(at: 15) { order.withLock { $0.append("15") } }
        gate.signal()
        Self.drain(timers, through: 100)
        #expect(order.withLock { $0 } == ["long", "15", "20", "30"])
    }

    /// Once `cancel` returns, the timer's work is not running: a cancel during the work waits for it.
    @Test func cancelWaitsForTheWorkRunningNow() {
        let (timers, clock) = Self.start()
        defer { timers.stop() }
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        let timer = timers.schedule(every: 10) {
            started.signal()
            gate.wait()
            usleep(20_000)
            finished.withLock { $0 = true }
        }
        clock.set(10, waking: timers)
        #expect(started.wait(timeout: Self.patience) == .success)
        let sawFinished = Locked<Bool?>(nil)
        let cancelled = DispatchSemaphore(value: 0)
        let canceller = BackgroundThread {
            timers.cancel(timer)
            sawFinished.withLock { $0 = finished.withLock { $0 } }
            cancelled.signal()
        }
        canceller.start()
        gate.signal()
        #expect(cancelled.wait(timeout: Self.patience) == .success)
        #expect(sawFinished.withLock { $0 } == true)
        // Cancelled while it ran: it does not run again.
        clock.set(100, waking: timers)
        Self.drain(timers, through: 100)
        #expect(timers.pendingCount == 0)
    }

    /// `stop` waits for the running work and ends the thread; what has not run stays and runs once
    /// the queue is started again.
    @Test func stopWaitsForTheRunningWorkAndKeepsWhatHasNotRun() {
        let (timers, clock) = Self.start()
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        timers.schedule(at: 10) {
            started.signal()
            gate.wait()
            usleep(20_000)
            finished.withLock { $0 = true }
        }
        let later = Locked(false)
        timers.schedule(at: 20) { later.withLock { $0 = true } }
        clock.set(10, waking: timers)
        #expect(started.wait(timeout: Self.patience) == .success)
        let stopped = DispatchSemaphore(value: 0)
        let sawFinished = Locked<Bool?>(nil)
        let stopper = BackgroundThread {
            timers.stop()
            sawFinished.withLock { $0 = finished.withLock { $0 } }
            stopped.signal()
        }
        stopper.start()
        gate.signal()
        #expect(stopped.wait(timeout: Self.patience) == .success)
        #expect(sawFinished.withLock { $0 } == true)
        #expect(!timers.isRunning)
        clock.set(20, waking: timers)
        #expect(timers.pendingCount == 1)
        #expect(!later.withLock { $0 })
        timers.start()
        defer { timers.stop() }
        Self.drain(timers, through: 20)
        #expect(later.withLock { $0 })
    }

    /// Work may cancel its own timer and stop its own queue without waiting for itself.
    @Test func workMayCancelItsTimerAndStopItsQueue() {
        let (timers, clock) = Self.start()
        let runs = Locked(0)
        let timer = Locked<TimerQueue.Timer?>(nil)
        timer.withLock { current in
            current = timers.schedule(every: 10) {
                runs.withLock { $0 += 1 }
                if let own = timer.withLock({ $0 }) { timers.cancel(own) }
            }
        }
        clock.set(10, waking: timers)
        Self.drain(timers, through: 10)
        clock.set(30, waking: timers)
        Self.drain(timers, through: 30)
        #expect(runs.withLock { $0 } == 1)
        let stopped = DispatchSemaphore(value: 0)
        timers.schedule(at: 30) {
            timers.stop()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: Self.patience) == .success)
        for _ in 0..<3000 where timers.isRunning { usleep(10_000) }
        #expect(!timers.isRunning)
        timers.stop()
    }

    /// On the default (monotonic) clock, work scheduled a little from now runs.
    @Test func theDefaultClockRunsWorkAfterItsDelay() {
        let timers = TimerQueue(name: "test-timers")
        timers.start()
        defer { timers.stop() }
        let ran = DispatchSemaphore(value: 0)
        let scheduledAt = timers.now
        let ranAt = Locked<Int64>(0)
        timers.schedule(after: 20) {
            ranAt.withLock { $0 = timers.now }
            ran.signal()
        }
        #expect(ran.wait(timeout: Self.patience) == .success)
        #expect(ranAt.withLock { $0 } >= scheduledAt + 20)
    }

    /// A queue nobody holds is released even while its thread runs (the thread holds only the
    /// queue's state), and its thread then ends.
    @Test func aQueueNobodyHoldsIsReleasedAndItsThreadEnds() {
        weak var released: TimerQueue?
        do {
            let timers = TimerQueue(name: "test-released")
            timers.start()
            released = timers
            // (The count is read in the loop's body: a `where` clause is evaluated on all 3 000
            // turns, which read /proc for each of the process's threads, even once it holds.)
            var running = Self.threads(named: "test-released")
            for _ in 0..<3000 where running == 0 {
                usleep(10_000)
                running = Self.threads(named: "test-released")
            }
            #expect(running == 1)
        }
        #expect(released == nil)
        var running = Self.threads(named: "test-released")
        for _ in 0..<3000 where running > 0 {
            usleep(10_000)
            running = Self.threads(named: "test-released")
        }
        #expect(running == 0)
    }

    /// The number of this process's threads called `name` (as `/proc` shows them).
    static func threads(named name: String) -> Int {
        guard let directory = opendir("/proc/self/task") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let task = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let read = fread(&buffer, 1, buffer.count, file)
            let comm = String(decoding: buffer.prefix(read).prefix { $0 != 0x0A }, as: UTF8.self)
            if comm == name { count += 1 }
            fclose(file)
        }
        return count
    }
}
