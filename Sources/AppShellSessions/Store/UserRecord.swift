/// The user's store as kept: the values every session of one user shares (on every instance),
/// and their version — what `NSUbiquitousKeyValueStore` is to a device, per account.
///
/// The version counts the writes: 0 while nothing is stored, then 1, 2, … . A write names the
/// version it was made on (`UserWrite.expectedVersion`) and is refused as a conflict when the
/// stored one differs, so that two sessions of one user never overwrite each other's changes.
package struct UserRecord: Sendable, Equatable {
    /// The stored values.
    package var values: [String: DefaultsValue]
    /// The number of writes that made them (0: none, nothing is stored).
    package var version: Int64

    /// A record of `values` at `version`.
    package init(values: [String: DefaultsValue] = [:], version: Int64 = 0) {
        self.values = values
        self.version = version
    }

    /// The bytes the values take in the store: their encoding, the one session values have
    /// (`DefaultsValue.encode`). What a per-user limit is checked against, before a write.
    package var encodedByteCount: Int { UserRecord.encodedByteCount(of: values) }

    /// The bytes `values` take in the store (`DefaultsValue.encode`).
    package static func encodedByteCount(of values: [String: DefaultsValue]) -> Int {
        DefaultsValue.encode(values).count
    }
}

/// A write of a user's store: its new values, made only over the version it was read at. Made
/// alone (`DefaultsBackend.writeUserStore`) or with a session's write, all or nothing
/// (`SessionRecord.userWrite`).
package struct UserWrite: Sendable, Equatable {
    /// The account whose store is written (its stored, lowercased name).
    package var user: String
    /// The store's new values: they replace what it holds.
    package var values: [String: DefaultsValue]
    /// The version the values were made from (`UserRecord.version`, 0: nothing was stored): the
    /// write is refused as a conflict, with nothing written, when the stored version is another.
    /// The store's version is `expectedVersion + 1` after it.
    package var expectedVersion: Int64

    /// A write of `values` to `user`'s store over `expectedVersion`.
    package init(user: String, values: [String: DefaultsValue], expectedVersion: Int64) {
        self.user = user
        self.values = values
        self.expectedVersion = expectedVersion
    }

    /// The error a refused write throws: the store was changed meanwhile, nothing was written.
    static func conflict(_ user: String, store: String) -> StoreError {
        StoreError(
            "store \(store): the user's store of \(user) was changed meanwhile (by another session); nothing was written",
            isConflict: true)
    }
}
