import AppShellConcurrency

/// A request's changes on their way to the store: handed to the `StoreWriter`, not durable yet.
///
/// Whoever answers the request waits for it — `whenDone` from a server thread (the answer is
/// deferred, the connection suspended), `wait` from a thread that may block — and answers only
/// once it is done: with the request's response when the error is `nil` (the changes are
/// durable, the session in memory took them and the work registered with
/// `SessionContext.afterCommit` ran), else with 503 (nothing was changed: the session is as it
/// was before the request, its `afterRollback` work ran).
package final class PendingCommit: Sendable {
    private struct State {
        var done = false
        var error: StoreError?
        /// The first callback (a request's answer: most commits have that one only, and an array
        /// for it was an allocation more per request), then the others.
        var callback: (@Sendable (StoreError?) -> Void)?
        var callbacks: [@Sendable (StoreError?) -> Void] = []
        /// The threads blocked in `wait`, each on its own condition (made by `wait`: most commits
        /// have no such thread, and a condition per commit was three allocations and a lock,
        /// broadcast and unlock on the writer's thread for each request).
        var waiters: [Condition] = []
    }

    private let state = Locked(State())

    /// Whether the write may be refused as a conflict (a shared store's, or one that writes a
    /// user's store): then the request is kept, to run again.
    package let mayConflict: Bool

    init(mayConflict: Bool = false) { self.mayConflict = mayConflict }

    /// Calls `callback` with the outcome once the commit is done — at once, on this thread, when
    /// it is done already, else on the writer's thread.
    package func whenDone(_ callback: @escaping @Sendable (StoreError?) -> Void) {
        let outcome = state.withLock { state -> StoreError?? in
            guard state.done else {
                if state.callback == nil { state.callback = callback } else { state.callbacks.append(callback) }
                return .none
            }
            return .some(state.error)
        }
        if let outcome { callback(outcome) }
    }

    /// Blocks until the commit is done; throws its error. Never call it on a server thread, nor on
    /// the writer's (from work run after a commit): that thread would wait for itself.
    package func wait() throws(StoreError) {
        let waiter = Condition()
        // Held from before it is registered until `wait` lets it go: `finish` broadcasts only
        // once this thread waits, so the wake-up is not missed.
        waiter.lock()
        let registered = state.withLock { state -> Bool in
            guard !state.done else { return false }
            state.waiters.append(waiter)
            return true
        }
        if registered {
            while !state.withLock({ $0.done }) { waiter.wait() }
        }
        waiter.unlock()
        if let error = state.withLock({ $0.error }) { throw error }
    }

    /// Whether the commit is done.
    package var isDone: Bool { state.withLock { $0.done } }

    /// Ends the commit with `error` (`nil`: durable) and runs the callbacks.
    func finish(_ error: StoreError?) {
        let (first, callbacks, waiters) = state.withLock { state in
            state.done = true
            state.error = error
            defer {
                state.callback = nil
                state.callbacks = []
                state.waiters = []
            }
            return (state.callback, state.callbacks, state.waiters)
        }
        for waiter in waiters {
            waiter.lock()
            waiter.broadcast()
            waiter.unlock()
        }
        first?(error)
        for callback in callbacks { callback(error) }
    }
}
