import AppShellConcurrency

/// The users' stores the sessions in memory read, kept between requests when only this process
/// writes the store (SQLite, memory): a logged-in request then reads its user's store from memory,
/// and a commit puts the version it wrote here. With a store other instances write too (Redis),
/// nothing is kept: each request reads the store.
///
/// A request reads a user's store through it at most once (its `SessionContext` keeps what it
/// read); writes go with the session's commit (`SessionRecord.userWrite`), which reports a
/// conflict when another session of the user wrote first — then the kept entry is dropped and the
/// request runs again on what is stored.
final class UserStoreCache: Sendable {
    /// The most users kept at once: past it the cache starts over (each entry is read again once).
    static let capacity = 100_000

    private let backend: any DefaultsBackend
    /// Whether entries are kept (only this process writes the store).
    private let keeps: Bool
    private let entries = Locked<[String: UserRecord]>([:])

    init(backend: any DefaultsBackend, keeps: Bool) {
        self.backend = backend
        self.keeps = keeps
    }

    /// `user`'s store: the kept one, else read from the store (and kept).
    func read(_ user: String) throws(StoreError) -> UserRecord {
        if keeps, let kept = entries.withLock({ $0[user] }) { return kept }
        let record = try backend.userStore(of: user)
        if keeps { remember(record, of: user) }
        return record
    }

    /// `record` is what the store holds for `user` now (a commit wrote it).
    func remember(_ record: UserRecord, of user: String) {
        guard keeps else { return }
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[user] == nil { entries.removeAll(keepingCapacity: true) }
            // Never back to an older version (two sessions' commits adopted out of order).
            if let kept = entries[user], kept.version > record.version { return }
            entries[user] = record
        }
    }

    /// Forgets `user`'s store: it changed in a way this process did not see (a conflict), or the
    /// account is gone.
    func forget(_ user: String) {
        entries.withLock { _ = $0.removeValue(forKey: user) }
    }
}
