import AppShellConcurrency

/// The server's requests waiting for a deferred answer: those still waiting when the shutdown
/// timeout ends are answered 503, and none may still be suspended when libmicrohttpd stops.
final class DeferredResponses: Sendable {
    private struct State {
        var waiting: [ObjectIdentifier: PendingResponse] = [:]
        var closing = false
    }

    private let state = Locked(State())

    /// Tracks `pending` until `remove`; false once shutdown began (answer at once instead).
    func admit(_ pending: PendingResponse) -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.waiting[ObjectIdentifier(pending)] = pending
            return true
        }
    }

    /// Stops tracking `pending` (answered and sent, or its request completed).
    func remove(_ pending: PendingResponse) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(pending)) }
    }

    /// Requests waiting now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// Admits no more, and answers `response` to every request whose work has not claimed it
    /// (all of them when `evenIfClaimed`, but those whose work is committing its outcome unless
    /// `evenIfFinishing`, as the last step before libmicrohttpd stops); returns how many this
    /// answered.
    @discardableResult
    func answerAll(with response: Response, evenIfClaimed: Bool, evenIfFinishing: Bool = true) -> Int {
        let all = state.withLock { state in
            state.closing = true
            return Array(state.waiting.values)
        }
        // Each answered here is told to stop its work (its own answer will not be used) before
        // its connection is resumed.
        let answered = all.filter {
            $0.answer(response, unlessClaimed: !evenIfClaimed, unlessFinishing: !evenIfFinishing, cancelling: true)
        }
        // An answer given just before may still be resuming its connection, outside its lock.
        for pending in all { pending.waitUntilResumed() }
        return answered.count
    }
}
