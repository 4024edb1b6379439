import Glibc

// The writes on a Redis Cluster whose keys span slots, as steps of one slot each, in an order
// that leaves nothing wrong when the instance stops between two (`RedisScript+Cluster.swift`).
//
// - A logged-in session's write: its user's set of sessions gets the session's key first (a
//   member with no record, or of another user, is checked and dropped where the set is used),
//   then the record is written.
// - A write carrying its user's store: the session is claimed (`claim`: checked at its expected
//   version and marked pending, so that no other checked write of it can pass), then the user's
//   store is checked and written (with the key entered in its set), then the record is written
//   over the claim (`finish`); when the store was not at its version, the claim is undone
//   (`abandon`) and nothing is written: both checks hold or neither write happens. The claim
//   keeps the new content beside the record, and the store's write records the claim's token
//   (`user-commits:{u}`), refused once the claim's deadline passed. Stopped after the claim: once
//   the deadline (`pendingMilliseconds`) is a second past, the next load asks whether the token
//   was committed — no: the claim is undone, neither is written; yes (stopped after the store's
//   write): the session's write is finished with the content kept, both are written.
// - A rotation (`rename`, with or without new content): the new key is written first, the old
//   one deleted second (only when unchanged since it was read, or still claimed by this write);
//   stopped between, both ids hold the record until the old one expires, which the client,
//   never given the new cookie, does not notice.
// - Removals leave the user's set as it is (its members are checked before use).
extension RedisDefaultsBackend {
    /// How long a claim holds a session (`RedisScript.claim`) before a load may undo it.
    static let pendingMilliseconds: Int64 = 5_000

    /// The one command of `write` on a cluster, or `nil` when it takes several steps.
    func clusterCommand(for write: StoreWrite) -> [[UInt8]]? {
        switch write {
        case .save(let id, let record) where record.userWrite == nil:
            // An action's write changes the record alone (`writeSnapshot`), logged in or not.
            if record.valuesAsStored, record.expectedVersion != nil {
                return recordWrite(record, checking: key(id), replacing: [], at: key(id))
            }
            guard record.user == nil else { return nil }
            return RedisScript.clusterWrite.call([key(id)], recordArguments(record) + [[]])
        case .remove(let id):
            return [bytes("DEL"), key(id)]
        case .touch:
            return command(for: write)
        default:
            return nil
        }
    }

    /// Makes `write` on a cluster, step by step; true when it was refused as a conflict.
    func clusterApply(_ write: StoreWrite) throws(StoreError) -> Bool {
        switch write {
        case .save(let id, let record):
            return try clusterSave(record, at: key(id), replacing: nil)
        case .renameReplacing(let id, let newID, let record):
            return try clusterSave(record, at: key(newID), replacing: key(id))
        case .rename(let id, let newID):
            try clusterRename(key(id), to: key(newID))
            return false
        default:
            return false
        }
    }

    /// `record` written at `target` (after `replaced`, the rotated key, which is checked instead
    /// and deleted): the steps above. True on a conflict.
    private func clusterSave(
        _ record: SessionRecord, at target: [UInt8], replacing replaced: [UInt8]?
    )
        throws(StoreError) -> Bool
    {
        let absolute = expiry?.deadline(created: record.created, accessed: Int64.max) ?? -1
        guard record.userWrite != nil || replaced != nil else {
            if let user = record.user {
                try expect(
                    RedisScript.clusterEnter.call([userSessionsKey(user)], [target, number(absolute)]), "a login")
            }
            let reply = try expect(
                RedisScript.clusterWrite.call([target], recordArguments(record) + [bytes(record.user ?? "")]), "a write"
            )
            return reply == .integer(-1)
        }
        // Claim the session checked (the old key of a rotation), the new content kept beside it.
        let checked = replaced ?? target
        let token = randomInstanceName()
        let userWrite = record.userWrite
        let content = Array(recordArguments(record).dropFirst()) + [bytes(record.user ?? "")]
        let claimed = try expect(
            RedisScript.claim.call(
                [checked],
                [
                    record.expectedVersion.map(number) ?? [], number(Self.pendingMilliseconds), bytes(token),
                    bytes(userWrite?.user ?? ""),
                ] + content), "a claim")
        guard let marker = claimed.bytes,
            let (version, deadline) = Self.pending(marker).map({ ($0.version, $0.deadline) })
        else { return true }
        if let userWrite {
            let written = try expect(
                RedisScript.clusterUserWrite.call(
                    [userStoreKey(userWrite.user), userSessionsKey(userWrite.user), userCommitsKey(userWrite.user)],
                    [
                        number(userWrite.expectedVersion), DefaultsValue.encode(userWrite.values),
                        record.user == userWrite.user ? target : [], number(absolute), bytes(token), number(deadline),
                    ]), "a user's store")
            if written == .integer(-1) {
                _ = try expect(RedisScript.abandon.call([checked], [marker, number(version), bytes("0")]), "a claim")
                return true
            }
        }
        if let user = record.user, user != userWrite?.user {
            try expect(RedisScript.clusterEnter.call([userSessionsKey(user)], [target, number(absolute)]), "a login")
        }
        guard let replaced else {
            _ = try expect(RedisScript.finish.call([target], [marker, number(version)] + content), "a write")
            return false
        }
        // A rotation: the new key written (unchecked: a new id) at the version after the old
        // one's (what the registry expects), then the old one dropped.
        _ = try expect(RedisScript.finish.call([target], [[], number(version)] + content), "a rotation")
        _ = try expect(RedisScript.abandon.call([replaced], [marker, number(version), bytes("1")]), "a rotation")
        return false
    }

    /// `old`'s record moved to `new` as it is (`DUMP`, `RESTORE … REPLACE`, with its time to
    /// live), its user's set following; the old key is deleted only when unchanged meanwhile.
    private func clusterRename(_ old: [UInt8], to new: [UInt8]) throws(StoreError) {
        let read = try writer.pipeline([
            [bytes("DUMP"), old], [bytes("PTTL"), old], [bytes("HGET"), old, bytes("u")],
            [bytes("HGET"), old, bytes("n")],
        ])
        guard let payload = read[0].bytes, let version = read[3].bytes else { return }
        if let user = read[2].text {
            try expect(RedisScript.clusterEnter.call([userSessionsKey(user)], [new, bytes("-1")]), "a rotation")
        }
        let ttl = max(read[1].integer ?? 0, 0)
        _ = try expect([bytes("RESTORE"), new, number(ttl), payload, bytes("REPLACE")], "a rotation")
        _ = try expect(RedisScript.deleteIfVersion.call([old], [version]), "a rotation")
    }

    /// On a cluster, removes `user`'s sessions but `kept`'s: the set read, each member deleted
    /// when logged in as the user (one round trip over the nodes), then taken out of the set.
    /// Stopped halfway, some are removed and the set still names them: a second call ends it.
    func clusterRemoveSessions(of user: String, except kept: [UInt8]?) throws(StoreError) -> [[UInt8]] {
        let set = userSessionsKey(user)
        let members = try expect([bytes("SMEMBERS"), set], "a user's sessions")
        guard case .array(let replies) = members else { throw unexpected(members, "SMEMBERS") }
        let keys = replies.compactMap(\.bytes).filter { $0 != kept }
        guard !keys.isEmpty else { return [] }
        let removed = try writer.pipeline(keys.map { RedisScript.removeIfUser.call([$0], [bytes(user)]) })
        var gone: [[UInt8]] = []
        for (key, reply) in zip(keys, removed) {
            if case .error = reply { throw unexpected(reply, "removing a user's sessions") }
            if reply == .integer(1) { gone.append(key) }
        }
        _ = try expect([bytes("SREM"), set] + keys, "a user's sessions")
        return gone
    }

    /// Ends the pending write `marker` of `key` (`RedisScript.recover`) once its deadline is
    /// past: finished when its user's store was written (the claim's token is among the user's
    /// committed claims), else undone. True when it did.
    func clusterRecover(_ key: [UInt8], marker: [UInt8]) throws(StoreError) -> Bool {
        guard let deadline = Self.pending(marker)?.deadline, now() >= deadline + 1_000 else { return false }
        let token = Array(marker.split(separator: UInt8(ascii: ":"), maxSplits: 2).last ?? [])
        let user = try expect([bytes("HGET"), key, bytes("pw")], "a pending write").text ?? ""
        var committed = false
        if !user.isEmpty {
            committed = try expect([bytes("ZSCORE"), userCommitsKey(user), token], "a pending write") != .null
        }
        return try expect(
            RedisScript.recover.call([key], [marker, bytes(committed ? "1" : "0")]), "a pending write") == .integer(1)
    }

    /// The version and deadline (Unix ms) of a pending marker, `p<version>:<deadline>:<token>`.
    static func pending(_ marker: [UInt8]) -> (version: Int64, deadline: Int64)? {
        guard marker.first == UInt8(ascii: "p") else { return nil }
        let parts = marker.dropFirst().split(separator: UInt8(ascii: ":"), maxSplits: 2)
        guard parts.count == 3, let version = Int64(String(decoding: parts[0], as: UTF8.self)),
            let deadline = Int64(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        return (version, deadline)
    }

    /// The key of the set of `user`'s store writes made with a session's (`clusterUserWrite`), by
    /// token: what `clusterRecover` asks.
    func userCommitsKey(_ user: String) -> [UInt8] { bytes(keyPrefix + "user-commits:{" + user + "}") }

    /// ARGV 1 to 7 of `write`/`clusterWrite` for `record`.
    func recordArguments(_ record: SessionRecord) -> [[UInt8]] {
        [
            record.expectedVersion.map(number) ?? [], DefaultsValue.encode(record.values), number(record.created),
            number(record.accessed), bytes(record.snapshot == nil ? "0" : "1"), record.snapshot ?? [],
            number(expiry?.deadline(created: record.created, accessed: record.accessed) ?? -1),
        ]
    }

    /// `command`'s reply by the writer; throws an error reply.
    @discardableResult
    func expect(_ command: [[UInt8]], _ what: String) throws(StoreError) -> RedisReply {
        let reply = try writer.command(command)
        if case .error = reply { throw unexpected(reply, what) }
        return reply
    }

    /// Unix milliseconds now.
    private func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }
}
