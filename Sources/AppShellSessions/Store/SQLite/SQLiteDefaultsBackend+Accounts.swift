import AppShellConcurrency

/// Accounts, users' stores and the sessions of a user, in the tables of schema version 5:
/// `accounts`, `user_stores`, and the `sessions.user` column with its index.
extension SQLiteDefaultsBackend {
    /// The account named `name`, or `nil` when there is none.
    package func account(named name: String) throws(StoreError) -> Account? {
        try reader.withLock { connection throws(StoreError) in
            try connection.query(AccountSQL.account, .text(Array(name.utf8))) { row in
                Account(name: name, passwordHash: row.string(at: 0), created: row.int64(at: 1))
            }
        }.first
    }

    /// Adds `account`; false, with nothing changed, when its name is taken.
    package func insertAccount(_ account: Account) throws(StoreError) -> Bool {
        try connection.withLock { connection throws(StoreError) in
            try connection.run(
                AccountSQL.insert, .text(Array(account.name.utf8)), .text(Array(account.passwordHash.utf8)),
                .integer(account.created)) == 1
        }
    }

    /// Sets the password hash of the account `name`; false when there is no such account.
    package func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool {
        try connection.withLock { connection throws(StoreError) in
            try connection.run(AccountSQL.setPasswordHash, .text(Array(name.utf8)), .text(Array(passwordHash.utf8)))
                == 1
        }
    }

    /// Every account's name, sorted.
    package func accountNames() throws(StoreError) -> [String] {
        // Sorted here, as the other stores sort: the same order whatever the column's collation.
        try reader.withLock { connection throws(StoreError) in
            try connection.query(AccountSQL.names) { $0.string(at: 0) }
        }.sorted()
    }

    /// Removes the account `name`, its user's store and every session logged in as it, in one
    /// transaction.
    package func removeAccount(named name: String) throws(StoreError) -> RemovedAccount? {
        let user = SQLiteValue.text(Array(name.utf8))
        let removed = try connection.withLock { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> (Account, [UInt8]?, Int64, [[UInt8]])? in
                let accounts = try connection.query(AccountSQL.account, user) { row in
                    Account(name: name, passwordHash: row.string(at: 0), created: row.int64(at: 1))
                }
                guard let account = accounts.first else { return nil }
                let store = try connection.query(AccountSQL.userStore, user) { ($0.text(at: 0), $0.int64(at: 1)) }
                try connection.run(AccountSQL.removeUserStore, user)
                let sessions = try connection.query(AccountSQL.removeSessions, user, .null) { $0.blob(at: 0) }
                try connection.run(AccountSQL.remove, user)
                return (account, store.first?.0, store.first?.1 ?? 0, sessions)
            }
        }
        guard let (account, data, version, sessions) = removed else { return nil }
        return RemovedAccount(
            account: account,
            userStore: UserRecord(values: data.flatMap(DefaultsValue.decode) ?? [:], version: version),
            sessions: Set(sessions.compactMap(SessionStoreKey.init(bytes:))))
    }

    /// Removes every session logged in as `user` but `kept`'s (one statement: one transaction).
    package func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey> {
        let removed = try connection.withLock { connection throws(StoreError) in
            try connection.query(
                AccountSQL.removeSessions, .text(Array(user.utf8)), kept.map { .storeKey($0) } ?? .null
            ) {
                $0.blob(at: 0)
            }
        }
        return Set(removed.compactMap(SessionStoreKey.init(bytes:)))
    }

    /// The user's store of `user` (empty at version 0 when nothing is stored); throws when its data
    /// cannot be decoded.
    package func userStore(of user: String) throws(StoreError) -> UserRecord {
        let rows = try reader.withLock { connection throws(StoreError) in
            try connection.query(AccountSQL.userStore, .text(Array(user.utf8))) { ($0.text(at: 0), $0.int64(at: 1)) }
        }
        guard let (data, version) = rows.first else { return UserRecord() }
        guard let values = DefaultsValue.decode(data) else {
            throw StoreError("store \(path): the user's store of \(user) holds data that is not a defaults object")
        }
        return UserRecord(values: values, version: version)
    }

    /// Writes a user's store alone, in one transaction, over its expected version.
    package func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 {
        let data = DefaultsValue.encode(write.values)
        let path = path
        return try connection.withLock { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> Int64 in
                guard try SQLiteDefaultsBackend.isAtExpectedVersion(write, on: connection) else {
                    throw UserWrite.conflict(write.user, store: path)
                }
                try SQLiteDefaultsBackend.storeUserWrite(write, data: data, on: connection)
                return write.expectedVersion + 1
            }
        }
    }

    /// Whether `write`'s store is at the version it expects (in the transaction `connection` holds).
    static func isAtExpectedVersion(_ write: UserWrite, on connection: SQLiteConnection) throws(StoreError) -> Bool {
        let version = try connection.query(AccountSQL.userVersion, .text(Array(write.user.utf8))) { $0.int64(at: 0) }
        return (version.first ?? 0) == write.expectedVersion
    }

    /// Writes `write`'s store with `data` as its values' encoding (made now when `nil`), once it
    /// was found at the expected version.
    static func storeUserWrite(_ write: UserWrite, data: [UInt8]?, on connection: SQLiteConnection) throws(StoreError) {
        try connection.run(
            AccountSQL.writeUserStore, .text(Array(write.user.utf8)), .text(data ?? DefaultsValue.encode(write.values)),
            .integer(write.expectedVersion + 1))
    }

    /// The statements of accounts and users' stores; each is prepared once and reused.
    private enum AccountSQL {
        static let account: StaticString = "SELECT password_hash, created FROM accounts WHERE name = ?1"
        static let insert: StaticString = """
            INSERT INTO accounts (name, password_hash, created) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING
            """
        static let setPasswordHash: StaticString = "UPDATE accounts SET password_hash = ?2 WHERE name = ?1"
        static let names: StaticString = "SELECT name FROM accounts"
        static let remove: StaticString = "DELETE FROM accounts WHERE name = ?1"
        // Through the partial index on `user`; ?2 is the kept session's key, or NULL for none.
        static let removeSessions: StaticString = "DELETE FROM sessions WHERE user = ?1 AND id IS NOT ?2 RETURNING id"
        static let userStore: StaticString = "SELECT data, version FROM user_stores WHERE name = ?1"
        static let userVersion: StaticString = "SELECT version FROM user_stores WHERE name = ?1"
        static let writeUserStore: StaticString = """
            INSERT INTO user_stores (name, data, version) VALUES (?1, ?2, ?3)
            ON CONFLICT (name) DO UPDATE SET data = excluded.data, version = excluded.version
            """
        static let removeUserStore: StaticString = "DELETE FROM user_stores WHERE name = ?1"
    }
}
