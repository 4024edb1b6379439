import AppShellConcurrency

// The registry's blocking entry, for threads that may wait (tests, tools): it waits for a
// session's load or commit where the server's `enter(presented:after:_:)` returns `.busy`.
extension SessionRegistry {
    /// Runs `body` with the session that `presentedID` (the cookie's value) names, or with a new
    /// session when it names none that is live: unknown, expired, malformed and forged ids are
    /// never adopted. An id retired by a rotation moments ago gets neither (see
    /// `SessionContext.isRetired`). Returns the body's result and the context, whose
    /// `needsCookie` and `id` say what cookie to send. The values set in `body` are in the
    /// backend when this returns: with a store writer it blocks until they are durable, so call
    /// it from threads that may wait (tests, tools), never from a server thread — the server
    /// calls `enter(presented:_:)`.
    @inlinable
    package func withSession<Result>(
        presentedID: String?, _ body: (SessionContext) throws -> Result
    ) throws -> (result: Result, context: SessionContext) {
        var result: Result?
        let context = try enterSession(presentedID: presentedID) { result = try body($0) }
        // `enterSession` returns only after `body` returned.
        return (result.unsafelyUnwrapped, context)
    }

    /// `withSession` without a result (blocks until the changes are durable, as it does).
    package func enterSession(presentedID: String?, _ body: (SessionContext) throws -> Void) throws -> SessionContext {
        let presented = presentedID.flatMap { SessionContext.parseCookie($0) }
        return try enterSession(presented: presented?.id, seal: presented?.seal, body)
    }

    /// `enterSession(presentedID:)` with the id already parsed (`nil` when none was presented or
    /// it did not parse); blocks while the session's earlier changes or its own are committed.
    package func enterSession(
        presented presentedID: SessionID?, seal: Substring? = nil, _ body: (SessionContext) throws -> Void
    ) throws
        -> SessionContext
    {
        let free = Signal()
        var loaded: LoadedSession?
        var conflicts = 0
        while true {
            switch try enter(presented: presentedID, seal: seal, after: loaded, body) {
            case .committed(let context): return context
            case .committing(let context, let commit):
                if let failure = SessionRegistry.outcome(of: commit) {
                    guard failure.isConflict, conflicts < SessionRegistry.conflictRetries else { throw failure }
                    // Changed meanwhile through another instance: run again on what is stored.
                    conflicts += 1
                    loaded = nil
                    continue
                }
                return context
            case .busy(let busy):
                let found = Locked<LoadedSession?>(nil)
                busy.whenFree { loaded in
                    found.withLock { $0 = loaded }
                    free.raise()
                }
                free.wait()
                loaded = found.withLock { $0 }
            }
        }
    }

    /// Runs `body` with the live session `id` names, if there is one; never creates a session
    /// (for work the server does on its own, such as a timer). Returns `nil` when there is none.
    /// Blocks while the session's changes are committed, as `enterSession` does: never call it
    /// from a server thread nor from work run after a commit.
    ///
    /// It is not a use of the session: its last access (in memory and stored) stays that of the
    /// user's last request, so server work never keeps an idle session from expiring. In a shared
    /// store, a commit refused because another instance changed the session meanwhile runs `body`
    /// again on what is stored (up to `conflictRetries` times), as a request is.
    package func withLiveSession<Result>(_ id: SessionID, _ body: (SessionContext) throws -> Result) throws -> Result? {
        let free = Signal()
        var conflicts = 0
        while true {
            let now = clock()
            guard case .found(let session) = try acquire(id, now: now, countsAsUse: false) else { return nil }
            var result: Result?
            let entry = try { () throws -> Entry? in
                defer { session.users.subtract(1, ordering: .relaxed) }
                return try session.state.withLock { state -> Entry? in
                    guard !state.retired, state.id == id else { return nil }
                    if state.committing { return .busy(BusySession(session: session)) }
                    return try run(
                        { result = try body($0) }, session, &state, isNew: false, now: now, countsAsUse: false)
                }
            }()
            switch entry {
            case nil: return nil
            case .committed: return result
            case .committing(_, let commit):
                if let failure = SessionRegistry.outcome(of: commit) {
                    guard failure.isConflict, conflicts < SessionRegistry.conflictRetries else { throw failure }
                    conflicts += 1
                    // Refused for another instance's lease, perhaps: waited out (or given up).
                    waitOutLeaseElsewhere(of: id)
                    continue
                }
                return result
            case .busy(let busy):
                busy.whenFree { _ in free.raise() }
                free.wait()
            }
        }
    }

    /// Waits for `commit` and returns its error (`nil`: durable).
    private static func outcome(of commit: PendingCommit) -> StoreError? {
        do throws(StoreError) {
            try commit.wait()
            return nil
        } catch {
            return error
        }
    }
}
