import AppShellConcurrency

/// The users' stores the sessions in memory read, kept between requests: a logged-in request
/// reads its user's store from memory, and a commit puts the version it wrote here. With a store
/// other instances write too (Redis), a kept store is read only at the version the loader found
/// stored moments before the request ran (`read(_:checkedVersion:)`); else it is read again.
///
/// A request reads a user's store through it at most once (its `SessionContext` keeps what it
/// read); writes go with the session's commit (`SessionRecord.userWrite`), which reports a
/// conflict when another session of the user wrote first — then the kept entry is dropped and the
/// request runs again on what is stored.
final class UserStoreCache: Sendable {
    /// The most users kept at once: past it the cache starts over (each entry is read again once).
    static let capacity = 100_000

    private let backend: any DefaultsBackend
    /// Whether entries are read without a check (only this process writes the store).
    private let keeps: Bool
    private let entries = Locked<[String: UserRecord]>([:])

    init(backend: any DefaultsBackend, keeps: Bool) {
        self.backend = backend
        self.keeps = keeps
    }

    /// `user`'s store: the kept one, else read from the store (and kept).
    func read(_ user: String) throws(StoreError) -> UserRecord {
        try read(user, checkedVersion: nil)
    }

    /// `user`'s store: the kept one when only this process writes the store, or when it is at
    /// `checkedVersion` (what the store held moments ago) — or at it or later when the request's
    /// session is `leased` (`LeaseTerms`: nobody else writes the store, so later is this process's
    /// own write); else read from the store (and kept).
    func read(_ user: String, checkedVersion: Int64?, leased: Bool = false) throws(StoreError) -> UserRecord {
        if let kept = entries.withLock({ $0[user] }),
            keeps || kept.version == checkedVersion || (leased && kept.version >= checkedVersion ?? .max)
        {
            return kept
        }
        let record = try backend.userStore(of: user)
        remember(record, of: user)
        return record
    }

    /// `record` is what the store holds for `user` now (a commit wrote it).
    func remember(_ record: UserRecord, of user: String) {
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
