import AppShellSessions

/// A backend that does every operation on an inner one: the base of tests' backends that hold,
/// pause or fail one operation and implement only that one (a memory backend by default:
/// `init(inner:)`).
///
/// Every requirement of `DefaultsBackend` forwards here, the protocol's default ones included,
/// so that a conforming type's own implementation is the one called and every other reaches
/// `inner`. A protocol, not an open base class: the backend's types are the package's own.
package protocol ForwardingDefaultsBackend: DefaultsBackend {
    /// The backend that does the work.
    var inner: any DefaultsBackend { get }
}

extension ForwardingDefaultsBackend {
    /// The inner backend's record of `id`.
    package func load(_ id: SessionID) throws(StoreError) -> SessionRecord? { try inner.load(id) }
    /// Saves in the inner backend.
    package func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) { try inner.save(id, record) }
    /// Touches in the inner backend.
    package func touch(_ id: SessionID, accessed: Int64) throws(StoreError) { try inner.touch(id, accessed: accessed) }
    /// Renames in the inner backend.
    package func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) { try inner.rename(id, to: newID) }
    /// Renames and replaces in the inner backend.
    package func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try inner.rename(id, to: newID, replacingWith: record)
    }
    /// Removes from the inner backend.
    package func remove(_ id: SessionID) throws(StoreError) { try inner.remove(id) }
    /// Removes the expired records of the inner backend.
    package func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        try inner.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
    }
    /// The inner backend's number of records.
    package func count() throws(StoreError) -> Int { try inner.count() }
    /// Closes the inner backend.
    package func close() { inner.close() }
    /// Makes the writes in the inner backend.
    package func applyAll(_ writes: [StoreWrite]) throws(StoreError) { try inner.applyAll(writes) }
    /// The inner backend's account.
    package func account(named name: String) throws(StoreError) -> Account? { try inner.account(named: name) }
    /// Adds the account to the inner backend.
    package func insertAccount(_ account: Account) throws(StoreError) -> Bool { try inner.insertAccount(account) }
    /// Sets the password hash in the inner backend.
    package func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool {
        try inner.setPasswordHash(passwordHash, ofAccount: name)
    }
    /// The inner backend's account names.
    package func accountNames() throws(StoreError) -> [String] { try inner.accountNames() }
    /// Removes the account from the inner backend.
    package func removeAccount(named name: String) throws(StoreError) -> RemovedAccount? {
        try inner.removeAccount(named: name)
    }
    /// Removes the user's sessions from the inner backend.
    package func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey> {
        try inner.removeSessions(of: user, except: kept)
    }
    /// The inner backend's user's store.
    package func userStore(of user: String) throws(StoreError) -> UserRecord { try inner.userStore(of: user) }
    /// Writes the user's store in the inner backend.
    package func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 { try inner.writeUserStore(write) }
}
