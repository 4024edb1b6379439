import AppShellConcurrency
import Dispatch

/// Runs work at a given time on one thread of its own: the splash finishing after its delay, a
/// reminder firing — things the server does with no request from the browser.
///
/// Entries are kept in deadline order (deadlines mostly arrive in order, so inserting is cheap).
public final class ShellScheduler: Sendable {
    private struct Entry: Sendable {
        let deadline: Int64
        let work: @Sendable () -> Void
    }

    private let entries = Locked<[Entry]>([])
    private let condition = Condition()
    private let running = Locked<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let clock: @Sendable () -> Int64

    /// A scheduler reading the time (milliseconds since 1970) from `clock`.
    public init(clock: @escaping @Sendable () -> Int64) { self.clock = clock }

    /// The number of entries waiting.
    public var pendingCount: Int { entries.withLock { $0.count } }

    /// Runs `work` on the scheduler's thread at `deadline` (milliseconds since 1970).
    public func schedule(at deadline: Int64, _ work: @escaping @Sendable () -> Void) {
        entries.withLock { entries in
            var index = entries.endIndex
            while index > entries.startIndex && entries[index - 1].deadline > deadline { index -= 1 }
            entries.insert(Entry(deadline: deadline, work: work), at: index)
        }
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Starts the thread.
    public func start() {
        let first = running.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        guard first else { return }
        let thread = BackgroundThread { [self] in
            while running.withLock({ $0 }) {
                for entry in dueEntries() { entry.work() }
                waitForNextDeadline()
            }
            finished.signal()
        }
        thread.name = "appshell-scheduler"
        thread.start()
    }

    /// Stops the thread; entries not yet due are dropped.
    public func stop() {
        let wasRunning = running.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        condition.lock()
        condition.signal()
        condition.unlock()
        finished.wait()
    }

    private func dueEntries() -> [Entry] {
        let now = clock()
        return entries.withLock { entries in
            let due = Array(entries.prefix { $0.deadline <= now })
            entries.removeFirst(due.count)
            return due
        }
    }

    private func waitForNextDeadline() {
        condition.lock()
        defer { condition.unlock() }
        guard running.withLock({ $0 }) else { return }
        let next = entries.withLock { $0.first?.deadline }
        let wait = next.map { max(0, $0 - clock()) } ?? 1000
        if wait > 0 { condition.wait(milliseconds: Int(min(wait, 1000))) }
    }
}
