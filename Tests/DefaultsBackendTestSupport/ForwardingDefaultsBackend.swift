import AppShellSessions

/// A backend that does every operation on an inner one (a memory backend by default): the base of
/// tests' backends that hold, pause or fail one operation and override only that one.
///
/// Every requirement of `DefaultsBackend` is a method here, the protocol's default ones included,
/// so that a subclass's override is the one called (a subclass cannot replace a default that its
/// base class took from the protocol's extension).
open class ForwardingDefaultsBackend: DefaultsBackend, @unchecked Sendable {
    // @unchecked: a class that subclasses extend cannot be checked; `inner` is a constant of a
    // Sendable type, and a subclass with state of its own guards it (and says how).

    /// The backend that does the work.
    public let inner: any DefaultsBackend

    /// A backend forwarding to `inner`.
    public init(inner: any DefaultsBackend = MemoryDefaultsBackend()) { self.inner = inner }

    /// The inner backend's record of `id`.
    open func load(_ id: SessionID) throws(StoreError) -> SessionRecord? { try inner.load(id) }
    /// Saves in the inner backend.
    open func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) { try inner.save(id, record) }
    /// Touches in the inner backend.
    open func touch(_ id: SessionID, accessed: Int64) throws(StoreError) { try inner.touch(id, accessed: accessed) }
    /// Renames in the inner backend.
    open func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) { try inner.rename(id, to: newID) }
    /// Renames and replaces in the inner backend.
    open func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try inner.rename(id, to: newID, replacingWith: record)
    }
    /// Removes from the inner backend.
    open func remove(_ id: SessionID) throws(StoreError) { try inner.remove(id) }
    /// Removes the expired records of the inner backend.
    open func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        try inner.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
    }
    /// The inner backend's number of records.
    open func count() throws(StoreError) -> Int { try inner.count() }
    /// Closes the inner backend.
    open func close() { inner.close() }
    /// Makes the writes in the inner backend.
    open func applyAll(_ writes: [StoreWrite]) throws(StoreError) { try inner.applyAll(writes) }
    /// The inner backend's account.
    open func account(named name: String) throws(StoreError) -> Account? { try inner.account(named: name) }
    /// Adds the account to the inner backend.
    open func insertAccount(_ account: Account) throws(StoreError) -> Bool { try inner.insertAccount(account) }
    /// Sets the password hash in the inner backend.
    open func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool {
        try inner.setPasswordHash(passwordHash, ofAccount: name)
    }
    /// The inner backend's account names.
    open func accountNames() throws(StoreError) -> [String] { try inner.accountNames() }
    /// Removes the account from the inner backend.
    open func removeAccount(named name: String) throws(StoreError) -> RemovedAccount? {
        try inner.removeAccount(named: name)
    }
    /// Removes the user's sessions from the inner backend.
    open func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey> {
        try inner.removeSessions(of: user, except: kept)
    }
    /// The inner backend's user's store.
    open func userStore(of user: String) throws(StoreError) -> UserRecord { try inner.userStore(of: user) }
    /// Writes the user's store in the inner backend.
    open func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 { try inner.writeUserStore(write) }
}
