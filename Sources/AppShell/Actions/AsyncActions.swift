import AppShellConcurrency
import AppShellSessions

/// The actions of every session that await work on Swift concurrency (`RootController.awaiting`):
/// how many may run at once, and each one's cancellation when its session's id changes.
///
/// A slot is taken while the action's handler runs (past the limit the action is refused, 503,
/// nothing changed) and given back when its task ends — not when it is answered: a cancelled task
/// that has not noticed yet still holds what it uses. A running action is tracked under its live
/// app's channel with the session id it began under; a commit that rotates the id (a login, a
/// logout) cancels those of the old id at once (`cancel(of:notStartedWith:)`).
final class AsyncActions: Sendable {
    /// One action's claim on the limit: given back once (`release`, or when it is let go of).
    final class Slot: Sendable {
        private let owner: AsyncActions
        private let released = Locked(false)

        fileprivate init(_ owner: AsyncActions) { self.owner = owner }

        /// Gives the slot back (once).
        func release() {
            let first = released.withLock { released in
                defer { released = true }
                return !released
            }
            if first { owner.running.withLock { $0 -= 1 } }
        }

        deinit { release() }
    }

    /// A tracked action, and what cancels it (answers it, then cancels its task).
    private struct Entry {
        let id: SessionID
        let cancel: @Sendable () -> Void
    }

    /// Actions that may run at once.
    let limit: Int
    private let running = Locked(0)
    private let tracked = Locked<(next: UInt64, entries: [String: [UInt64: Entry]])>((1, [:]))

    /// Room for `limit` actions at once.
    init(limit: Int) { self.limit = limit }

    /// Actions running now (their tasks not ended).
    var count: Int { running.withLock { $0 } }

    /// A slot for one more action; `nil` when `limit` run.
    func reserve() -> Slot? {
        let taken = running.withLock { running -> Bool in
            guard running < limit else { return false }
            running += 1
            return true
        }
        return taken ? Slot(self) : nil
    }

    /// Tracks an action of `channel` begun under `id` until `untrack`; `cancel` runs (once, with
    /// no lock held) if the id is rotated first. Returns the action's token.
    func track(channel: String, id: SessionID, cancel: @escaping @Sendable () -> Void) -> UInt64 {
        tracked.withLock { tracked in
            let token = tracked.next
            tracked.next += 1
            tracked.entries[channel, default: [:]][token] = Entry(id: id, cancel: cancel)
            return token
        }
    }

    /// Stops tracking the action `token` of `channel`; false when it was cancelled already.
    func untrack(channel: String, _ token: UInt64) -> Bool {
        tracked.withLock { tracked in
            guard tracked.entries[channel]?.removeValue(forKey: token) != nil else { return false }
            if tracked.entries[channel]?.isEmpty == true { tracked.entries[channel] = nil }
            return true
        }
    }

    /// Cancels the actions of `channel` begun under any id but `current` (after a rotation).
    func cancel(of channel: String, notStartedWith current: SessionID) {
        let cancelled = tracked.withLock { tracked -> [Entry] in
            guard let entries = tracked.entries[channel] else { return [] }
            let stale = entries.filter { $0.value.id != current }
            for token in stale.keys { tracked.entries[channel]?[token] = nil }
            if tracked.entries[channel]?.isEmpty == true { tracked.entries[channel] = nil }
            return Array(stale.values)
        }
        for entry in cancelled { entry.cancel() }
    }
}
