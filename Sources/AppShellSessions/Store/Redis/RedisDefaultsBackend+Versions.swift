// Reading records' versions alone: what a request checks before it trusts its copy.

extension RedisDefaultsBackend {
    /// The version of `id`'s record (its field `n`, which every write sets), or `nil` when there is
    /// none: one field, not the record.
    package func storedVersion(of id: SessionID) throws(StoreError) -> Int64? {
        let reply = try reader.command([bytes("HGET"), key(id), bytes("n")])
        if reply == .null { return nil }
        // A cluster's pending write: at no version (`load` undoes it once its deadline passed).
        if let version = reply.integer { return version }
        guard reply.bytes != nil else { throw unexpected(reply, "HGET") }
        return -1
    }

    /// The versions of `ids`' records and of `users`' stores, in one round trip.
    package func storedVersions(
        of ids: [SessionID], userStoresOf users: [String]
    ) throws(StoreError) -> (
        sessions: [Int64?], userStores: [Int64]
    ) {
        let commands =
            ids.map { [bytes("HGET"), key($0), bytes("n")] }
            + users.map {
                [bytes("HGET"), userStoreKey($0), bytes("n")]
            }
        let replies = try reader.pipeline(commands)
        var versions: [Int64?] = []
        for reply in replies {
            if reply == .null {
                versions.append(nil)
            } else {
                guard let version = reply.integer else {
                    // A cluster's pending write: at no version (see `storedVersion`).
                    guard reply.bytes != nil else { throw unexpected(reply, "HGET") }
                    versions.append(-1)
                    continue
                }
                versions.append(version)
            }
        }
        return (Array(versions[..<ids.count]), versions[ids.count...].map { $0 ?? 0 })
    }
}
