// Walking the store's keys (`SCAN`): the sweep that deletes expired records, and the count.

extension RedisDefaultsBackend {
    /// Deletes every record last used before `accessedBefore` or created before `createdBefore`;
    /// returns how many. Walks the store's keys with `SCAN` (a few hundred at a time), each
    /// checked and deleted by a script, so a record saved meanwhile is never deleted on old times.
    package func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        var removed = 0
        try forEachKeyBatch { keys throws(StoreError) in
            let checks = keys.map { key in
                // On a cluster the user's set is left (its members are checked before use).
                writer.isCluster
                    ? RedisScript.clusterRemoveIfExpired.call([key], [number(accessedBefore), number(createdBefore)])
                    : RedisScript.removeIfExpired.call(
                        [key], [number(accessedBefore), number(createdBefore), bytes(keyPrefix)])
            }
            let replies = try writer.pipeline(checks)
            for reply in replies {
                if case .error = reply { throw unexpected(reply, "removing expired records") }
                removed += Int(reply.integer ?? 0)
            }
        }
        return removed
    }

    /// The number of records (walks the keys with `SCAN`: for tests and the operator, not for
    /// requests).
    package func count() throws(StoreError) -> Int {
        var seen = Set<[UInt8]>()
        // SCAN may return a key twice (while the server resizes its table): counted once.
        try forEachKeyBatch { keys in seen.formUnion(keys) }
        return seen.count
    }

    /// `text` with the characters `SCAN`'s patterns treat specially escaped.
    static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Calls `body` with the store's keys, a batch at a time (`SCAN … MATCH <prefix>{*}`, on each
    /// primary of a cluster).
    func forEachKeyBatch(_ body: ([[UInt8]]) throws(StoreError) -> Void) throws(StoreError) {
        let pattern = bytes(RedisDefaultsBackend.globEscaped(keyPrefix) + "{*}")
        // A cluster's keys are spread over its primaries: each is walked with its own cursor.
        for node in reader.nodeNames {
            var cursor = bytes("0")
            repeat {
                let reply = try reader.command(
                    [bytes("SCAN"), cursor, bytes("MATCH"), pattern, bytes("COUNT"), bytes("500")], node: node)
                guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].bytes,
                    case .array(let found) = parts[1]
                else { throw unexpected(reply, "SCAN") }
                let keys = found.compactMap(\.bytes)
                if !keys.isEmpty { try body(keys) }
                cursor = next
            } while cursor != bytes("0")
        }
    }
}

extension RedisDefaultsBackend {
    /// The key of the account `name`: a hash of `h` (the password hash) and `c` (created).
    func accountKey(_ name: String) -> [UInt8] { bytes(keyPrefix + "account:{" + name + "}") }

    /// The key of the set of every account's name.
    var accountsKey: [UInt8] { bytes(keyPrefix + "accounts") }

    /// The key of `user`'s store: a hash of `v` (the values, encoded as a session's) and `n` (the
    /// version). Its name is also made by the scripts (`RedisScript.userKeys`).
    func userStoreKey(_ user: String) -> [UInt8] { bytes(keyPrefix + "user:{" + user + "}") }

    /// The key of the set of the keys of `user`'s sessions (the records with `u` = `user`; a
    /// member may name a record gone or changed since, which is checked before use). Its name is
    /// also made by the scripts (`RedisScript.userKeys`).
    func userSessionsKey(_ user: String) -> [UInt8] { bytes(keyPrefix + "user-sessions:{" + user + "}") }

    /// The store key a record's key names (`key(_:)` undone), if it is one of this store's.
    func storeKey(ofKey key: [UInt8]) -> SessionStoreKey? {
        let head = bytes(keyPrefix + "{")
        guard key.count > head.count + 1, key.starts(with: head), key.last == UInt8(ascii: "}") else { return nil }
        return SessionStoreKey(text: String(decoding: key[head.count..<(key.count - 1)], as: UTF8.self))
    }
}
