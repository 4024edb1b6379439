import AppShellConcurrency
import AppShellSessions
import Foundation

/// Runs each session's time-based work when it is due — the splash finishing after its delay —
/// so the root swaps on the server with no request from the browser.
///
/// One thread serves every session: a list of (deadline, session) kept in deadline order. Only
/// sessions whose browser came back (a second request while on the splash) are scheduled; the
/// state of any other is brought up to date when it is next read, which gives the same result.
public final class ShellScheduler: Sendable {
    private struct Entry: Sendable {
        let deadline: Int64
        let session: SessionID
    }

    private let entries = Locked<[Entry]>([])
    private let condition = NSCondition()
    private let running = Locked<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let clock: @Sendable () -> Int64

    /// A scheduler reading the time (milliseconds since 1970) from `clock`.
    public init(clock: @escaping @Sendable () -> Int64 = Shell.systemClock) { self.clock = clock }

    /// The number of sessions waiting for their work.
    public var pendingCount: Int { entries.withLock { $0.count } }

    /// Asks for `session`'s work to run at `deadline`.
    func schedule(_ session: SessionID, at deadline: Int64) {
        entries.withLock { entries in
            let entry = Entry(deadline: deadline, session: session)
            // Deadlines mostly arrive in order: search from the end.
            var index = entries.endIndex
            while index > entries.startIndex && entries[index - 1].deadline > deadline { index -= 1 }
            entries.insert(entry, at: index)
        }
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Starts the thread that calls `work` with each session whose deadline has come.
    public func start(_ work: @escaping @Sendable (SessionID) -> Void) {
        let started = running.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        guard started else { return }
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                for session in dueSessions() { work(session) }
                waitForNextDeadline()
            }
            finished.signal()
        }
        thread.name = "appshell-scheduler"
        thread.start()
    }

    /// Stops the thread (work already due is dropped).
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

    private func dueSessions() -> [SessionID] {
        let now = clock()
        return entries.withLock { entries in
            let due = entries.prefix { $0.deadline <= now }
            entries.removeFirst(due.count)
            return due.map(\.session)
        }
    }

    private func waitForNextDeadline() {
        condition.lock()
        defer { condition.unlock() }
        guard running.withLock({ $0 }) else { return }
        let next = entries.withLock { $0.first?.deadline }
        let wait = next.map { max(0, $0 - clock()) } ?? 1000
        if wait > 0 { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(min(wait, 1000)) / 1000)) }
    }
}
