import AppShellConcurrency

/// A backend that keeps records in memory: for tests and benchmarks. Nothing survives the process.
///
/// Everything is one value under one lock, so a batch (`applyAll`) is all or nothing.
package final class MemoryDefaultsBackend: DefaultsBackend {
    private let contents = Locked(Contents())

    /// An empty store.
    package init() {}

    /// The record of `id`.
    package func load(_ id: SessionID) -> SessionRecord? { contents.withLock { $0.records[id] } }

    /// Inserts or replaces the record of `id`, with its user's store when it carries a write of it
    /// (refused as a conflict, neither written, when that store is not at the expected version).
    package func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) {
        try apply(.save(id, record))
    }

    /// Sets the `accessed` time of `id`'s record.
    package func touch(_ id: SessionID, accessed: Int64) { contents.withLock { $0.records[id]?.accessed = accessed } }

    /// Moves the record of `id` to `newID`.
    package func rename(_ id: SessionID, to newID: SessionID) {
        contents.withLock { $0.rename(id, to: newID) }
    }

    /// Moves the record of `id` to `newID` with `record` as its content (and its user's store's
    /// write, if it carries one: all or nothing).
    package func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try apply(.renameReplacing(id, to: newID, record))
    }

    /// Deletes the record of `id`.
    package func remove(_ id: SessionID) { contents.withLock { $0.remove(id) } }

    /// Deletes expired records.
    package func removeExpired(accessedBefore: Int64, createdBefore: Int64) -> Int {
        contents.withLock { $0.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore) }
    }

    /// The number of records.
    package func count() -> Int { contents.withLock { $0.records.count } }

    /// Makes one write.
    package func apply(_ write: StoreWrite) throws(StoreError) {
        try contents.withLock { contents throws(StoreError) in try contents.apply(write) }
    }

    /// Makes `writes` in order, all or nothing: every user write is checked first, against the
    /// versions the batch's earlier writes leave (a conflict is the one way a write fails here),
    /// then all are made — without a copy of the store.
    package func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        try contents.withLock { contents throws(StoreError) in
            var versions: [String: Int64] = [:]
            for case let userWrite? in writes.lazy.map(\.userWrite) {
                let version = versions[userWrite.user] ?? contents.userStores[userWrite.user]?.version ?? 0
                guard version == userWrite.expectedVersion else {
                    throw UserWrite.conflict(userWrite.user, store: "memory")
                }
                versions[userWrite.user] = version + 1
            }
            for write in writes { try contents.apply(write) }
        }
    }

    /// Makes `writes` in order; those refused as conflicts (a user's store changed meanwhile) are
    /// reported by position, and the others hold.
    package func applyAllReportingConflicts(_ writes: [StoreWrite]) throws(StoreError) -> Set<Int> {
        contents.withLock { contents in
            var conflicts = Set<Int>()
            for (position, write) in writes.enumerated() {
                // A conflict is found before anything of the write is made; there is no other error.
                do throws(StoreError) { try contents.apply(write) } catch { conflicts.insert(position) }
            }
            return conflicts
        }
    }

    /// The account named `name`.
    package func account(named name: String) -> Account? { contents.withLock { $0.accounts[name] } }

    /// Adds `account` unless its name is taken.
    package func insertAccount(_ account: Account) -> Bool {
        contents.withLock { contents in
            guard contents.accounts[account.name] == nil else { return false }
            contents.accounts[account.name] = account
            return true
        }
    }

    /// Sets the password hash of the account `name`, if there is one.
    package func setPasswordHash(_ passwordHash: String, ofAccount name: String) -> Bool {
        contents.withLock { contents in
            guard contents.accounts[name] != nil else { return false }
            contents.accounts[name]?.passwordHash = passwordHash
            return true
        }
    }

    /// Every account's name, sorted.
    package func accountNames() -> [String] { contents.withLock { $0.accounts.keys.sorted() } }

    /// Removes the account `name`, its user's store and its sessions.
    package func removeAccount(named name: String) -> RemovedAccount? {
        contents.withLock { contents in
            guard let account = contents.accounts.removeValue(forKey: name) else { return nil }
            let store = contents.userStores.removeValue(forKey: name) ?? UserRecord()
            let sessions = contents.removeSessions(of: name, except: nil)
            return RemovedAccount(account: account, userStore: store, sessions: sessions)
        }
    }

    /// Removes every session of `user` but `kept`.
    package func removeSessions(of user: String, except kept: SessionID?) -> Set<SessionStoreKey> {
        contents.withLock { $0.removeSessions(of: user, except: kept) }
    }

    /// The user's store of `user`.
    package func userStore(of user: String) -> UserRecord {
        contents.withLock { $0.userStores[user] ?? UserRecord() }
    }

    /// Writes a user's store alone, over its expected version.
    package func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 {
        try contents.withLock { contents throws(StoreError) in
            try contents.check(write)
            contents.write(write)
            return write.expectedVersion + 1
        }
    }
}

extension MemoryDefaultsBackend {
    /// Everything the store holds, as one value.
    private struct Contents {
        var records: [SessionID: SessionRecord] = [:]
        /// The ids of the records logged in as each user.
        var sessionsOfUser: [String: Set<SessionID>] = [:]
        var userStores: [String: UserRecord] = [:]
        var accounts: [String: Account] = [:]

        mutating func apply(_ write: StoreWrite) throws(StoreError) {
            switch write {
            case .save(let id, let record):
                if let userWrite = record.userWrite { try check(userWrite) }
                put(record, at: id)
            case .touch(let id, let accessed):
                records[id]?.accessed = accessed
            case .rename(let id, let newID):
                rename(id, to: newID)
            case .renameReplacing(let id, let newID, let record):
                if let userWrite = record.userWrite { try check(userWrite) }
                remove(id)
                put(record, at: newID)
            case .remove(let id):
                remove(id)
            case .removeExpired(let accessedBefore, let createdBefore):
                _ = removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
            }
        }

        /// Throws the conflict when `write`'s store is not at its expected version.
        func check(_ write: UserWrite) throws(StoreError) {
            guard (userStores[write.user]?.version ?? 0) == write.expectedVersion else {
                throw UserWrite.conflict(write.user, store: "memory")
            }
        }

        mutating func write(_ write: UserWrite) {
            userStores[write.user] = UserRecord(values: write.values, version: write.expectedVersion + 1)
        }

        /// Stores `record` (and its user's store's write) at `id`, replacing any record there.
        mutating func put(_ record: SessionRecord, at id: SessionID) {
            remove(id)
            var stored = record
            if let userWrite = stored.userWrite { write(userWrite) }
            stored.userWrite = nil
            records[id] = stored
            if let user = stored.user { sessionsOfUser[user, default: []].insert(id) }
        }

        mutating func remove(_ id: SessionID) {
            guard let removed = records.removeValue(forKey: id), let user = removed.user else { return }
            sessionsOfUser[user]?.remove(id)
            if sessionsOfUser[user]?.isEmpty == true { sessionsOfUser[user] = nil }
        }

        mutating func rename(_ id: SessionID, to newID: SessionID) {
            guard let record = records[id] else { return }
            remove(id)
            put(record, at: newID)
        }

        mutating func removeExpired(accessedBefore: Int64, createdBefore: Int64) -> Int {
            let expired = records.filter { $0.value.accessed < accessedBefore || $0.value.created < createdBefore }
            for id in expired.keys { remove(id) }
            return expired.count
        }

        mutating func removeSessions(of user: String, except kept: SessionID?) -> Set<SessionStoreKey> {
            let ids = (sessionsOfUser[user] ?? []).filter { $0 != kept }
            for id in ids { remove(id) }
            return Set(ids.map(\.storeKey))
        }
    }
}
