import AppShellConcurrency

/// A backend that keeps records in a Redis server, which several AppShell instances share.
///
/// Each session is one hash, `<prefix>{<key>}`, where `<key>` is the session's store key (the hash
/// of its id, `SessionStoreKey`, in base64url), never the id, which is the cookie: a reader of the
/// server (a read-only user, `MONITOR`, a copy of its dump) learns no one's session. The key in
/// braces is the key's hash tag, so every key a session may have lives in one slot. A hash has
/// the fields `v` (the values, encoded as the
/// SQLite store encodes them), `s` (the snapshot, absent when there is none), `c` and `a` (created
/// and last accessed, Unix seconds) and `n`, the record's version: one more at every write of its
/// content, checked by a write that expects one (`SessionRecord.expectedVersion`), so that
/// instances sharing the store never overwrite each other's changes (`isShared`). With `expiry` given, every write sets the key to expire when
/// the session would (`EXPIREAT` at the earlier of last access + idle timeout and creation +
/// absolute timeout): Redis removes expired sessions itself, and `removeExpired` (the sweeper) only
/// catches what it has not yet.
///
/// A logged-in session's hash also has `u`, its user, and its key is a member of the user's set of
/// sessions (`userSessionsKey`), which renames, removals and sweeps keep up to date and which
/// expires no sooner than its last session; a member whose record expired or changed user is
/// checked and dropped when the set is used. Accounts and users' stores have keys of their own
/// (`RedisDefaultsBackend+Accounts.swift`), none of them matching the sessions' `<prefix>{…}`.
///
/// Durability is Redis's: a write has returned once the server has it; what survives the server's
/// restart depends on its persistence settings (`appendonly yes` with `appendfsync always`: every
/// acknowledged write; `everysec`: all but about the last second; none: nothing). See the Deploying
/// article, "Scale out on Redis".
///
/// Each write is one script (`RedisScript`, called by its SHA-1), atomic on the server: a rotation
/// with new content too. `applyAll`'s batch (a group commit) is one round trip, a pipeline of its
/// writes; they are of different sessions or in order, and no reader needs them all at once, so
/// no `MULTI`/`EXEC` is wrapped around them. A rotation moves the record with `RENAME` in a
/// script. A script fails at run time only on a key of another type, which nothing else writes
/// under the prefix.
///
/// On a Redis Cluster (a `redis-cluster://` URL) the same keys are used — a session's in its own
/// slot, a user's account, store and set of sessions in the user's (`{<user>}`) — and the writes
/// whose keys span slots (a login, a user's store with a session, a rotation, a removal of a
/// user's sessions or account) are made in steps of one slot each, in an order that leaves
/// nothing wrong when stopped between two (`RedisDefaultsBackend+Cluster.swift`); the others,
/// and the batches' pipelines, are as on one server.
package final class RedisDefaultsBackend: DefaultsBackend {
    /// The server.
    package let url: RedisURL
    /// What every key of this store begins with.
    package let keyPrefix: String
    /// When records expire (`nil`: never by themselves).
    package let expiry: Expiry?
    // Writes on one connection, loads on another: a load is not held up behind a batch's round trip.
    // On a cluster, two `RedisCluster`s the same way (`RedisStoreLink`).
    let writer: RedisStoreLink
    let reader: RedisStoreLink
    /// The shared secrets this instance uses, by name, kept in Redis by every sweep
    /// (`keepSharedSecrets`).
    let secrets = Locked<[String: [UInt8]]>([:])
    /// What names this instance in the records' leases (`RedisLease`): random, one per backend.
    let leaseHolder = RedisLease.newHolder()

    /// Connects to `url` (twice: one connection for writes, one for loads; for a
    /// `redis-cluster://` URL, two cluster clients, which connect to each primary at its first
    /// use); throws when the server (no seed of the cluster) cannot be reached or refuses the
    /// login. `keyPrefix` begins every key (several apps, or tests, can share one database with
    /// different prefixes); on a cluster it must hold no `{`, which would change the keys' hash
    /// tags. On a cluster, a command whose node cannot be reached is retried for
    /// `retryMilliseconds` (a failover under way), then throws (`RedisCluster`).
    package init(
        url: RedisURL, keyPrefix: String = "appshell:", expiry: Expiry? = nil, timeoutMilliseconds: Int = 2_000,
        retryMilliseconds: Int = 1_000
    )
        throws(StoreError)
    {
        self.url = url
        self.keyPrefix = keyPrefix
        self.expiry = expiry
        if url.isCluster {
            guard !keyPrefix.contains("{") else {
                throw StoreError("store \(url): a key prefix with { would change the keys' slots on a cluster")
            }
            let scripts = RedisScript.all + RedisScript.cluster
            writer = .cluster(
                try RedisCluster(
                    url: url, timeoutMilliseconds: timeoutMilliseconds, retryMilliseconds: retryMilliseconds,
                    scripts: scripts))
            reader = .cluster(
                try RedisCluster(
                    url: url, timeoutMilliseconds: timeoutMilliseconds, retryMilliseconds: retryMilliseconds))
            return
        }
        writer = .server(
            Locked(try RedisConnection(url: url, timeoutMilliseconds: timeoutMilliseconds, scripts: RedisScript.all)))
        // The loader's checks grant leases by a script (`checkLeases`).
        reader = .server(
            Locked(
                try RedisConnection(
                    url: url, timeoutMilliseconds: timeoutMilliseconds,
                    scripts: [RedisScript.lease, RedisScript.releaseLease])))
        let reply = try writer.command([bytes("PING")])
        if case .error(let message) = reply { throw StoreError("store \(url): \(message)") }
    }

    /// The key of `id`'s record: named by its store key, not by the id.
    func key(_ id: SessionID) -> [UInt8] { Array(id.storeKey.text(prefix: keyPrefix + "{", suffix: "}").utf8) }

    /// The record of `id`, or `nil` when there is none; throws when its data cannot be decoded.
    package func load(_ id: SessionID) throws(StoreError) -> SessionRecord? {
        let reply = try reader.command([
            bytes("HMGET"), key(id), bytes("v"), bytes("s"), bytes("c"), bytes("a"), bytes("n"), bytes("u"),
        ])
        guard case .array(let fields) = reply, fields.count == 6 else { throw unexpected(reply, "HMGET") }
        let version = fields[4].integer
        // A cluster's pending write (`RedisScript.claim`), ended once its deadline passed, else the
        // record is at no version a write could expect until it ends.
        if version == nil, writer.isCluster, let marker = fields[4].bytes,
            try clusterRecover(key(id), marker: marker)
        {
            return try load(id)
        }
        guard let created = fields[2].integer, let accessed = fields[3].integer else { return nil }
        guard let data = fields[0].bytes, let values = DefaultsValue.decode(data) else {
            throw StoreError("store \(url): the record of session \(id) holds data that is not a defaults object")
        }
        var record = SessionRecord(values: values, created: created, accessed: accessed, snapshot: fields[1].bytes)
        record.version = version ?? (fields[4] == .null ? 0 : -1)
        record.user = fields[5].bytes.map { String(decoding: $0, as: UTF8.self) }
        return record
    }

    /// Other instances write the same records.
    package var isShared: Bool { true }

    /// Inserts or replaces the record of `id` (refused as a conflict when it is not at the
    /// record's `expectedVersion`, or its user's store, when it carries a write of it, is not at
    /// the write's: nothing is written then).
    package func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) {
        try runChecked(.save(id, record))
    }

    /// Sets the `accessed` time of `id`'s record, if there is one.
    package func touch(_ id: SessionID, accessed: Int64) throws(StoreError) {
        try runChecked(.touch(id, accessed: accessed))
    }

    /// Moves the record of `id` to `newID`, replacing any record `newID` had; does nothing when
    /// `id` has no record.
    package func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) {
        try runChecked(.rename(id, to: newID))
    }

    /// Moves the record of `id` to `newID` with `record` as its content, in one step (refused as
    /// a conflict when `id`'s record is not at the record's `expectedVersion`).
    package func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try runChecked(.renameReplacing(id, to: newID, record))
    }

    /// Deletes the record of `id`.
    package func remove(_ id: SessionID) throws(StoreError) {
        try runChecked(.remove(id))
    }

    /// Makes `writes` in order in one round trip (a pipeline of scripts). The sweeper's
    /// `removeExpired` is left to Redis when the store has an `expiry` (every record it wrote
    /// carries its deadline, and a walk over every key here would hold up every request's write
    /// behind it); without one it walks the keys after the batch.
    package func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        if let conflict = try applyAllReportingConflicts(writes).min() {
            throw StoreError("store \(url): write \(conflict + 1) of the batch: \(Self.conflictText)", isConflict: true)
        }
    }

    /// `applyAll`, with the writes refused because their record changed meanwhile reported by
    /// position; the others hold.
    package func applyAllReportingConflicts(_ writes: [StoreWrite]) throws(StoreError) -> Set<Int> {
        var commands: [[[UInt8]]] = []
        // Each write but a sweep is one command: its result's position, and the write's.
        var positions: [Int] = []
        var sweeps: [(Int64, Int64)] = []
        var conflicts = Set<Int>()
        for (position, write) in writes.enumerated() {
            if case .removeExpired(let accessedBefore, let createdBefore) = write {
                if expiry == nil { sweeps.append((accessedBefore, createdBefore)) }
            } else if writer.isCluster {
                // The writes of several steps in their place: those before them pipelined first.
                guard let command = clusterCommand(for: write) else {
                    try flush(&commands, &positions, into: &conflicts)
                    if try clusterApply(write) { conflicts.insert(position) }
                    continue
                }
                commands.append(command)
                positions.append(position)
            } else {
                commands.append(command(for: write))
                positions.append(position)
            }
        }
        try flush(&commands, &positions, into: &conflicts)
        for (accessedBefore, createdBefore) in sweeps {
            _ = try removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
        }
        // Once a sweep: a secret evicted from Redis is put back as this instance uses it.
        if writes.contains(where: { if case .removeExpired = $0 { true } else { false } }) {
            keepSharedSecrets()
        }
        return conflicts
    }

    /// Runs `commands` (the writes at `positions`) in one round trip, adds those refused to
    /// `conflicts`, and empties both.
    private func flush(
        _ commands: inout [[[UInt8]]], _ positions: inout [Int], into conflicts: inout Set<Int>
    ) throws(StoreError) {
        guard !commands.isEmpty else { return }
        let results = try pipelined(commands)
        for (index, result) in results.enumerated() where result == .integer(-1) {
            conflicts.insert(positions[index])
        }
        commands.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
    }

    private static let conflictText = "the session was changed meanwhile (by another instance); nothing was written"

    /// Closes both connections; later calls throw.
    package func close() {
        writer.close()
        reader.close()
    }

    /// The one command of a write (not `removeExpired`).
    func command(for write: StoreWrite) -> [[UInt8]] {
        switch write {
        case .save(let id, let record):
            return recordWrite(record, checking: key(id), replacing: [], at: key(id))
        case .touch(let id, let accessed):
            return RedisScript.touch.call(
                [key(id)],
                [number(accessed), number(expiry?.idleSeconds ?? -1), number(expiry?.absoluteSeconds ?? -1)])
        case .rename(let id, let newID):
            return RedisScript.rename.call([key(id), key(newID)], [leaseHolder, bytes(keyPrefix)])
        case .renameReplacing(let id, let newID, let record):
            return recordWrite(record, checking: key(id), replacing: [key(newID)], at: key(newID))
        case .remove(let id):
            return RedisScript.remove.call([key(id)], [leaseHolder, bytes(keyPrefix)])
        case .removeExpired:
            return [bytes("PING")]
        }
    }

    /// The script writing `record` at `target` once `checked` is at the record's expected
    /// version, after deleting `checked` and `others`: its reply is the new version, or -1 (a
    /// conflict: nothing written). An action's write — only the snapshot changed, over a known
    /// version — sends the snapshot and access alone (`RedisScript.writeSnapshot`).
    func recordWrite(
        _ record: SessionRecord, checking checked: [UInt8], replacing others: [[UInt8]], at target: [UInt8]
    )
        -> [[UInt8]]
    {
        let deadline = expiry?.deadline(created: record.created, accessed: record.accessed) ?? -1
        // An action's write: its values, creation and user are as stored at the version it expects.
        if record.valuesAsStored, let expected = record.expectedVersion, record.userWrite == nil, others.isEmpty,
            target == checked
        {
            return RedisScript.writeSnapshot.call(
                [target],
                [
                    number(expected), number(record.accessed), bytes(record.snapshot == nil ? "0" : "1"),
                    record.snapshot ?? [], number(deadline), leaseHolder,
                ])
        }
        let keys = [checked] + others + (target == checked ? [] : [target])
        let arguments = [
            record.expectedVersion.map(number) ?? [], DefaultsValue.encode(record.values), number(record.created),
            number(record.accessed), bytes(record.snapshot == nil ? "0" : "1"), record.snapshot ?? [],
            number(deadline),
        ]
        guard record.user != nil || record.userWrite != nil else {
            return RedisScript.write.call(keys, arguments + [leaseHolder])
        }
        let userWrite = record.userWrite
        return RedisScript.writeWithUser.call(
            keys,
            arguments + [
                bytes(record.user ?? ""), bytes(userWrite?.user ?? ""), number(userWrite?.expectedVersion ?? 0),
                userWrite.map { DefaultsValue.encode($0.values) } ?? [],
                number(expiry?.deadline(created: record.created, accessed: Int64.max) ?? -1), leaseHolder,
                bytes(keyPrefix),
            ])
    }

    /// Makes one write that may conflict, alone: throws the conflict.
    private func runChecked(_ write: StoreWrite) throws(StoreError) {
        let command: [[UInt8]]
        if writer.isCluster {
            guard let one = clusterCommand(for: write) else {
                if try clusterApply(write) {
                    throw StoreError("store \(url): \(Self.conflictText)", isConflict: true)
                }
                return
            }
            command = one
        } else {
            command = self.command(for: write)
        }
        let reply = try writer.command(command)
        if case .error = reply { throw unexpected(reply, "a write") }
        if reply == .integer(-1) { throw StoreError("store \(url): \(Self.conflictText)", isConflict: true) }
    }

    /// `commands` in one round trip; throws when the server refused one.
    private func pipelined(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        let results = try writer.pipeline(commands)
        for result in results {
            if case .error = result { throw unexpected(result, "a write") }
        }
        return results
    }

    func unexpected(_ reply: RedisReply, _ what: String) -> StoreError {
        if case .error(let message) = reply { return StoreError("store \(url): \(what): \(message)") }
        return StoreError("store \(url): \(what): an unexpected reply (\(reply))")
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    func number(_ value: Int64) -> [UInt8] { Array(String(value).utf8) }
}
