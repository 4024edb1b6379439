/// A user who can log in, as the store keeps them: the name, the password's hash and when the
/// account was made. Kept beside the sessions, in the same store (every backend).
package struct Account: Sendable, Equatable {
    /// The account's name, as stored: lowercased (`AccountName` in AppShellAuth checks and folds
    /// it before it reaches the store, which compares names exactly).
    package var name: String
    /// The password's hash as `PasswordHash` writes it (an Argon2id string with its parameters and
    /// salt); never the password.
    package var passwordHash: String
    /// When the account was made, in Unix seconds.
    package var created: Int64

    /// An account with the given parts.
    package init(name: String, passwordHash: String, created: Int64) {
        self.name = name
        self.passwordHash = passwordHash
        self.created = created
    }
}

/// What removing an account removed (`DefaultsBackend.removeAccount(named:)`): the account, its
/// user's store, and the store keys of the sessions that were logged in as it — so that the caller
/// can end those sessions in memory too (and close their event streams).
package struct RemovedAccount: Sendable, Equatable {
    /// The account as it was.
    package var account: Account
    /// The user's store as it was (version 0 when it held nothing).
    package var userStore: UserRecord
    /// The store keys of the session records that were removed (`SessionID.storeKey`).
    package var sessions: Set<SessionStoreKey>

    /// A removal of `account`, with the user's store and sessions it took along.
    package init(account: Account, userStore: UserRecord, sessions: Set<SessionStoreKey>) {
        self.account = account
        self.userStore = userStore
        self.sessions = sessions
    }
}
