import AppShellHTTP

// What a live app's kept answers (its state, its page) hold of the shell's budget.

extension LiveApp {
    /// Whether `response` may be kept in a cache of this app: always for a throwaway copy (it is
    /// let go with the request), else when the budget has room.
    func mayKeep(_ response: PreparedResponse) -> Bool { cacheBudget?.hasRoom(for: response.heldBytes) ?? true }

    /// Counts a cache's change from `old` to `new` against the budget.
    func recount(_ old: PreparedResponse?, _ new: PreparedResponse?) {
        guard let cacheBudget else { return }
        let change = (new?.heldBytes ?? 0) - (old?.heldBytes ?? 0)
        cachedBytes += change
        cacheBudget.add(change)
    }

    /// Joins `budget` (a session's live app, once): what its caches hold counts against it from
    /// now on, and is given back when the app is let go.
    func join(_ budget: CachedAnswerBudget) {
        guard cacheBudget == nil else { return }
        cacheBudget = budget
        cachedBytes = (stateCache?.response.heldBytes ?? 0) + (pageCache?.response.heldBytes ?? 0)
        budget.add(cachedBytes)
    }
}
