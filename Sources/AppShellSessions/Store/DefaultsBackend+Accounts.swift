/// Accounts and users' stores for a backend that keeps none (a test's backend of its own): every
/// operation throws, saying so. The three backends of this module keep them.
extension DefaultsBackend {
    /// Throws: this store keeps no accounts.
    package func account(named name: String) throws(StoreError) -> Account? { throw noAccounts }

    /// Throws: this store keeps no accounts.
    package func insertAccount(_ account: Account) throws(StoreError) -> Bool { throw noAccounts }

    /// Throws: this store keeps no accounts.
    package func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool {
        throw noAccounts
    }

    /// Throws: this store keeps no accounts.
    package func accountNames() throws(StoreError) -> [String] { throw noAccounts }

    /// Throws: this store keeps no accounts.
    package func removeAccount(named name: String) throws(StoreError) -> RemovedAccount? { throw noAccounts }

    /// Throws: this store keeps no accounts.
    package func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey> {
        throw noAccounts
    }

    /// Throws: this store keeps no users' stores.
    package func userStore(of user: String) throws(StoreError) -> UserRecord { throw noAccounts }

    /// Throws: this store keeps no users' stores.
    package func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 { throw noAccounts }

    private var noAccounts: StoreError {
        StoreError("this session store (\(type(of: self))) keeps no accounts or users' stores")
    }
}
