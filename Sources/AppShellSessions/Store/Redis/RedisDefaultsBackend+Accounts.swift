import AppShellConcurrency

/// Accounts, users' stores and the sessions of a user: keys of their own beside the sessions'
/// (`accountKey`, `accountsKey`, `userStoreKey`, `userSessionsKey`), each change one script.
extension RedisDefaultsBackend {
    /// The account named `name`, or `nil` when there is none.
    package func account(named name: String) throws(StoreError) -> Account? {
        let reply = try read([bytes("HMGET"), accountKey(name), bytes("h"), bytes("c")])
        guard case .array(let fields) = reply, fields.count == 2 else { throw unexpected(reply, "HMGET") }
        guard let hash = fields[0].text, let created = fields[1].integer else { return nil }
        return Account(name: name, passwordHash: hash, created: created)
    }

    /// Adds `account`; false, with nothing changed, when its name is taken.
    package func insertAccount(_ account: Account) throws(StoreError) -> Bool {
        if writer.isCluster {
            // The name listed first (`accounts` is of another slot): stopped between the two, a
            // name without an account is listed, which `accountNames` leaves out.
            _ = try write([bytes("SADD"), accountsKey, bytes(account.name)])
            return try write(
                RedisScript.clusterInsertAccount.call(
                    [accountKey(account.name)], [bytes(account.passwordHash), number(account.created)]))
                == .integer(1)
        }
        return try write(
            RedisScript.insertAccount.call(
                [accountKey(account.name), accountsKey],
                [bytes(account.name), bytes(account.passwordHash), number(account.created)])) == .integer(1)
    }

    /// Sets the password hash of the account `name`; false when there is no such account.
    package func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool {
        try write(RedisScript.setPasswordHash.call([accountKey(name)], [bytes(passwordHash)])) == .integer(1)
    }

    /// Every account's name, sorted.
    package func accountNames() throws(StoreError) -> [String] {
        let reply = try read([bytes("SMEMBERS"), accountsKey])
        guard case .array(let members) = reply else { throw unexpected(reply, "SMEMBERS") }
        let names = members.compactMap(\.text).sorted()
        guard reader.isCluster, !names.isEmpty else { return names }
        // On a cluster, a name is listed before its account is made and after it is removed.
        let exist = try reader.pipeline(names.map { [bytes("EXISTS"), accountKey($0)] })
        return zip(names, exist).filter { $1 == .integer(1) }.map(\.0)
    }

    /// Removes the account `name`, its user's store and every session logged in as it, in one
    /// script.
    package func removeAccount(named name: String) throws(StoreError) -> RemovedAccount? {
        if writer.isCluster { return try clusterRemoveAccount(named: name) }
        let reply = try write(
            RedisScript.removeAccount.call(
                [accountKey(name), accountsKey, userStoreKey(name), userSessionsKey(name)],
                [bytes(name), leaseHolder, bytes(keyPrefix)]))
        if reply == .null { return nil }
        guard case .array(let parts) = reply, parts.count == 6, let hash = parts[0].text,
            let created = parts[1].integer, let data = parts[2].bytes, let version = parts[3].integer,
            case .array(let removed) = parts[4], let left = parts[5].integer
        else { throw unexpected(reply, "removing an account") }
        RedisLease.waitOut(milliseconds: left)
        let values = data.isEmpty ? [:] : DefaultsValue.decode(data) ?? [:]
        return RemovedAccount(
            account: Account(name: name, passwordHash: hash, created: created),
            userStore: UserRecord(values: values, version: version), sessions: storeKeys(removed))
    }

    /// Removes every session logged in as `user` but `kept`'s, in one script.
    package func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey> {
        if writer.isCluster {
            return Set(try clusterRemoveSessions(of: user, except: kept.map(key)).compactMap(storeKey(ofKey:)))
        }
        let reply = try write(
            RedisScript.removeSessions.call(
                [userSessionsKey(user)], [bytes(user), kept.map(key) ?? [], leaseHolder, bytes(keyPrefix)]))
        guard case .array(let parts) = reply, parts.count == 2, case .array(let removed) = parts[0],
            let left = parts[1].integer
        else { throw unexpected(reply, "removing a user's sessions") }
        RedisLease.waitOut(milliseconds: left)
        return storeKeys(removed)
    }

    /// The user's store of `user` (empty at version 0 when nothing is stored); throws when its data
    /// cannot be decoded.
    package func userStore(of user: String) throws(StoreError) -> UserRecord {
        let reply = try read([bytes("HMGET"), userStoreKey(user), bytes("v"), bytes("n")])
        guard case .array(let fields) = reply, fields.count == 2 else { throw unexpected(reply, "HMGET") }
        guard let data = fields[0].bytes, let version = fields[1].integer else { return UserRecord() }
        guard let values = DefaultsValue.decode(data) else {
            throw StoreError("store \(url): the user's store of \(user) holds data that is not a defaults object")
        }
        return UserRecord(values: values, version: version)
    }

    /// Writes a user's store alone, over its expected version (one script).
    package func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64 {
        let reply = try self.write(
            RedisScript.writeUserStore.call(
                [userStoreKey(write.user)],
                [number(write.expectedVersion), DefaultsValue.encode(write.values), leaseHolder]))
        guard let version = reply.integer else { throw unexpected(reply, "writing a user's store") }
        guard version >= 0 else { throw UserWrite.conflict(write.user, store: "\(url)") }
        return version
    }

    /// `removeAccount` on a cluster: the account and its store read, the user's sessions
    /// removed (`clusterRemoveSessions`), then the account, store and set deleted (one slot), then
    /// the name taken out of the list. Stopped after the sessions: the account stands, logged out
    /// everywhere; after the deletion: its name is listed, which `accountNames` leaves out.
    private func clusterRemoveAccount(named name: String) throws(StoreError) -> RemovedAccount? {
        let read = try writer.pipeline([
            [bytes("HMGET"), accountKey(name), bytes("h"), bytes("c")],
            [bytes("HMGET"), userStoreKey(name), bytes("v"), bytes("n")],
        ])
        guard case .array(let account) = read[0], account.count == 2, case .array(let store) = read[1],
            store.count == 2
        else { throw unexpected(read[0], "removing an account") }
        guard let hash = account[0].text, let created = account[1].integer else { return nil }
        let removed = try clusterRemoveSessions(of: name, except: nil)
        _ = try write([bytes("DEL"), accountKey(name), userStoreKey(name), userSessionsKey(name), userCommitsKey(name)])
        _ = try write([bytes("SREM"), accountsKey, bytes(name)])
        let data = store[0].bytes ?? []
        let values = data.isEmpty ? [:] : DefaultsValue.decode(data) ?? [:]
        return RemovedAccount(
            account: Account(name: name, passwordHash: hash, created: created),
            userStore: UserRecord(values: values, version: store[1].integer ?? 0),
            sessions: Set(removed.compactMap(storeKey(ofKey:))))
    }

    /// The store keys of the records' keys in `replies`.
    private func storeKeys(_ replies: [RedisReply]) -> Set<SessionStoreKey> {
        Set(replies.compactMap { $0.bytes.flatMap(storeKey(ofKey:)) })
    }

    private func read(_ command: [[UInt8]]) throws(StoreError) -> RedisReply {
        let reply = try reader.command(command)
        if case .error = reply { throw unexpected(reply, "a read") }
        return reply
    }

    private func write(_ command: [[UInt8]]) throws(StoreError) -> RedisReply {
        let reply = try writer.command(command)
        if case .error = reply { throw unexpected(reply, "a write") }
        return reply
    }
}
