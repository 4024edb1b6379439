// Sessions that hold nothing, kept by their cookies in a shared store (see `SessionSeal`).

extension SessionRegistry {
    /// Whether the body left the session holding nothing worth keeping: no values, no snapshot,
    /// no live object (a memo at most), no user logged in.
    func holdsNothing(_ context: SessionContext) -> Bool {
        context.defaultsIfMade?.storedValues.isEmpty ?? true && context.keptSnapshot == nil
            && context.attachment == nil && context.user == nil
    }

    /// Runs `body` with the session `id` names when `seal` (what its cookie carried after it)
    /// shows it was issued by an instance sharing the store, holding nothing, and has not expired
    /// since: as it was at that instance, its memo kept. `nil` when the seal is not one, and the
    /// request gets a new session as for any unknown id.
    ///
    /// When it still holds nothing afterwards, nothing is written and nothing kept in memory (the
    /// cookie keeps its seal: no `Set-Cookie`); else it is stored from now on, as any session of
    /// a shared store is once it holds something. Two instances taking it up at once both write
    /// it as new: one write is refused as a conflict, and its request runs again on the other's.
    func runSealed(
        _ body: (SessionContext) throws -> Void, id: SessionID, seal text: Substring, now: Int64
    ) throws -> Entry? {
        guard let seal, let opened = seal.open(text, for: id) else { return nil }
        let age = now - opened.created
        // A little clock skew between instances is allowed; an expired session is gone.
        guard age >= -60, age <= min(configuration.idleTimeoutSeconds, configuration.absoluteTimeoutSeconds) else {
            return nil
        }
        let context = SessionContext(
            id: id, isNew: false, isStored: false, values: [:], registration: registration, snapshot: nil,
            attachment: nil, memo: opened.memo, readUserStore: userStores.read)
        do {
            try body(context)
        } catch {
            context.rolledBack()
            throw error
        }
        if holdsNothing(context), context.id == id {
            context.committed()
            return .committed(context)
        }
        let session = Session(
            id: id, values: [:], snapshot: nil, created: opened.created, accessed: now, persisted: false)
        return try session.state.withLock { state in
            try commit(context, in: session, &state, now: now, accessed: now, isNew: true)
        }
    }
}
