import AppShellConcurrency
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A backend that keeps records in one SQLite file in WAL mode: the embedded default.
///
/// Rows are keyed by the hash of the session's id (`SessionStoreKey`), never by the id, and the
/// file, its `-wal` and its `-shm` are readable by their owner only: a copy of the file is not a
/// way into anyone's session.
///
/// Durability: the file runs with `synchronous=NORMAL`. A `save` that has returned is in the
/// write-ahead log, which the operating system holds even if the process is killed (SIGKILL, a
/// crash), so a new process loads it. The log is synced to the disk at checkpoints rather than at
/// every commit, so an operating-system crash or a power loss may lose the last commits — never
/// the consistency of the file.
///
/// Opening refuses, with a `StoreError`, anything it cannot trust: a file that is not an SQLite
/// database, a damaged one (`PRAGMA quick_check`), one written by a newer schema, one that holds
/// tables of another program, or one that cannot be read and written. It never replaces or
/// recreates the file.
package final class SQLiteDefaultsBackend: DefaultsBackend {
    /// The database file, as given to `init(path:)`.
    package let path: String
    // One connection writes for the process: SQLite serialises writers to a file anyway, and one
    // connection used under one lock keeps to its rule of one thread per connection at a time.
    let connection: Locked<SQLiteConnection>
    // Loads use a second one: in WAL mode a reader never waits for the writer, so a request that
    // loads a session is not held up by a group commit in progress.
    let reader: Locked<SQLiteConnection>
    // Checkpoints on a thread of its own, so that no commit waits for one (see `SQLiteCheckpointer`).
    let checkpointer: SQLiteCheckpointer

    /// Opens the store at `path`, creating the file and its parent directories when missing.
    package init(path: String) throws(StoreError) {
        try SQLiteDefaultsBackend.createParentDirectory(of: path)
        try SQLiteConnection.checkFile(at: path)
        try SQLiteConnection.createOwnerOnly(at: path)
        let connection = try SQLiteConnection(path: path)
        try SQLiteDefaultsBackend.prepare(connection)
        let reader = try SQLiteConnection(path: path)
        try reader.execute("PRAGMA busy_timeout = 5000")
        checkpointer = try SQLiteCheckpointer(path: path)
        connection.reportCommits(to: checkpointer)
        self.path = path
        self.connection = Locked(connection)
        self.reader = Locked(reader)
    }

    /// The record of `id`, or `nil` when there is none; throws when its data cannot be decoded.
    package func load(_ id: SessionID) throws(StoreError) -> SessionRecord? {
        let rows = try reader.withLock { connection throws(StoreError) in
            try connection.query(SQL.load, .storeKey(id)) { row in
                (
                    created: row.int64(at: 0), accessed: row.int64(at: 1), data: row.text(at: 2),
                    snapshot: row.isNull(at: 3) ? nil : row.blob(at: 3),
                    user: row.isNull(at: 4) ? nil : row.string(at: 4)
                )
            }
        }
        guard let row = rows.first else { return nil }
        // Decoded outside the lock: parsing is the slow part and needs no connection.
        guard let values = DefaultsValue.decode(row.data) else {
            throw StoreError("store \(path): the record of session \(id) holds data that is not a defaults object")
        }
        var record = SessionRecord(values: values, created: row.created, accessed: row.accessed, snapshot: row.snapshot)
        record.user = row.user
        return record
    }

    /// Inserts or replaces the record of `id` (with its user's store, in one transaction, when it
    /// carries a write of it: refused as a conflict, neither written, when that store is not at
    /// the expected version).
    package func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) {
        if record.userWrite != nil { return try applyAll([.save(id, record)]) }
        let data = DefaultsValue.encode(record.values)
        let snapshot: SQLiteValue = record.snapshot.map { .blob($0) } ?? .null
        try connection.withLock { connection throws(StoreError) in
            try SQLiteDefaultsBackend.save(id, record, data: data, snapshot: snapshot, on: connection)
        }
    }

    /// Inserts or replaces the record of `id` with `data` and `snapshot` as its encoded parts.
    ///
    /// Most saves keep both times (a session's actions within one second): then an UPDATE of the
    /// other two columns does it, which leaves the indexes on `created` and `accessed` alone. The
    /// upsert assigns those columns, and SQLite then rewrites both index entries whatever their
    /// values: with one save per transaction 4.6 pages written to the log instead of 2.0.
    private static func save(
        _ id: SessionID, _ record: SessionRecord, data: [UInt8], snapshot: SQLiteValue, on connection: SQLiteConnection
    ) throws(StoreError) {
        let user = userValue(record.user)
        let kept = try connection.run(
            SQL.saveKeepingTimes, .storeKey(id), .integer(record.created), .integer(record.accessed), .text(data),
            snapshot, user)
        guard kept == 0 else { return }
        _ = try connection.run(
            SQL.save, .storeKey(id), .integer(record.created), .integer(record.accessed), .text(data), snapshot, user)
    }

    /// A session's user as a column's value (NULL: logged in as no one).
    static func userValue(_ user: String?) -> SQLiteValue { user.map { .text(Array($0.utf8)) } ?? .null }

    /// Sets the `accessed` time of `id`'s record, if there is one.
    package func touch(_ id: SessionID, accessed: Int64) throws(StoreError) {
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.touch, .storeKey(id), .integer(accessed))
        }
    }

    /// Moves the record of `id` to `newID`, replacing any record `newID` had; does nothing when
    /// `id` has no record.
    package func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) {
        // One statement is one transaction in SQLite: the row changes its key atomically, and no
        // reader sees both ids or neither.
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.rename, .storeKey(id), .storeKey(newID))
        }
    }

    /// Moves the record of `id` to `newID` with `record` as its content (and its user's store's
    /// write, if it carries one), in one transaction.
    package func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try applyAll([.renameReplacing(id, to: newID, record)])
    }

    /// Makes `writes` in order in one transaction (a group commit's batch: one commit, one WAL
    /// append, for the writes of many requests); when it throws, none of them holds — a write
    /// whose user's store changed meanwhile throws the conflict.
    package func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        if let conflict = try commit(writes, reportingConflicts: false).min() {
            // Not reached: without reporting, the first conflict throws.
            throw StoreError("store \(path): write \(conflict + 1) of the batch was refused", isConflict: true)
        }
    }

    /// `applyAll`, with the writes whose user's store changed meanwhile (`SessionRecord.userWrite`)
    /// left out and reported by position: nothing of them is made, the others hold, in one
    /// transaction.
    package func applyAllReportingConflicts(_ writes: [StoreWrite]) throws(StoreError) -> Set<Int> {
        try commit(writes, reportingConflicts: true)
    }

    /// Makes `writes` in one transaction; a refused one throws its conflict (rolling back the
    /// others) unless `reportingConflicts`, which leaves it out and returns its position.
    private func commit(_ writes: [StoreWrite], reportingConflicts: Bool) throws(StoreError) -> Set<Int> {
        // Encoded before the lock: the lock is the store's one writer's, keep it short. The
        // snapshots' bytes are made here, on the writer's thread, not on the requests' threads.
        // Only the encoded parts are kept, by position: no copy of the writes.
        var encoded: [Encoded] = []
        encoded.reserveCapacity(writes.count)
        for write in writes {
            switch write {
            case .save(_, let record) where record.valuesAsStored:
                // The values are encoded only if the record is not found as it was (`save`).
                encoded.append(
                    Encoded(data: nil, snapshot: record.snapshot, userData: record.userWrite.map(Self.encode)))
            case .save(_, let record), .renameReplacing(_, _, let record):
                encoded.append(
                    Encoded(
                        data: DefaultsValue.encode(record.values), snapshot: record.snapshot,
                        userData: record.userWrite.map(Self.encode)))
            case .touch, .rename, .remove, .removeExpired:
                encoded.append(Encoded(data: nil, snapshot: nil, userData: nil))
            }
        }
        let path = path
        return try connection.withLock { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> Set<Int> in
                var conflicts = Set<Int>()
                for index in writes.indices {
                    // Checked before anything of the write is made: refused, it leaves nothing.
                    if let userWrite = writes[index].userWrite,
                        try !SQLiteDefaultsBackend.isAtExpectedVersion(userWrite, on: connection)
                    {
                        guard reportingConflicts else { throw UserWrite.conflict(userWrite.user, store: path) }
                        conflicts.insert(index)
                        continue
                    }
                    try SQLiteDefaultsBackend.run(writes[index], encoded[index], on: connection)
                }
                return conflicts
            }
        }
    }

    private static func encode(_ write: UserWrite) -> [UInt8] { DefaultsValue.encode(write.values) }

    /// A write's parts encoded before the writer's lock is taken.
    private struct Encoded {
        /// The values' encoding; `nil` when they are not written or not yet encoded.
        let data: [UInt8]?
        /// The snapshot's bytes.
        let snapshot: [UInt8]?
        /// The encoding of the values of the user's store written with the record, if any.
        let userData: [UInt8]?

        var snapshotValue: SQLiteValue { snapshot.map { .blob($0) } ?? .null }
    }

    private static func run(_ write: StoreWrite, _ encoded: Encoded, on connection: SQLiteConnection) throws(StoreError)
    {
        switch write {
        case .save(let id, let record):
            // When the values are stored already, the snapshot alone, if the record is as it was.
            let kept =
                encoded.data == nil
                ? try connection.run(
                    SQL.saveSnapshotKeepingTimes, .storeKey(id), .integer(record.created), .integer(record.accessed),
                    encoded.snapshotValue, userValue(record.user)) : 0
            if kept == 0 {
                let data = encoded.data ?? DefaultsValue.encode(record.values)
                try save(id, record, data: data, snapshot: encoded.snapshotValue, on: connection)
            }
            if let userWrite = record.userWrite {
                try storeUserWrite(userWrite, data: encoded.userData, on: connection)
            }
        case .touch(let id, let accessed):
            _ = try connection.run(SQL.touch, .storeKey(id), .integer(accessed))
        case .rename(let id, let newID):
            _ = try connection.run(SQL.rename, .storeKey(id), .storeKey(newID))
        case .renameReplacing(let id, let newID, let record):
            _ = try connection.run(SQL.remove, .storeKey(id))
            _ = try connection.run(
                SQL.save, .storeKey(newID), .integer(record.created), .integer(record.accessed),
                .text(encoded.data ?? DefaultsValue.encode(record.values)), encoded.snapshotValue,
                userValue(record.user))
            if let userWrite = record.userWrite {
                try storeUserWrite(userWrite, data: encoded.userData, on: connection)
            }
        case .remove(let id):
            _ = try connection.run(SQL.remove, .storeKey(id))
        case .removeExpired(let accessedBefore, let createdBefore):
            _ = try connection.run(SQL.removeExpired, .integer(accessedBefore), .integer(createdBefore))
        }
    }

    /// Finishes the checkpoint that `checkpointer` left with a few frames to copy (those committed
    /// while it ran), at a moment when no transaction is open: after it the log is fully copied,
    /// and the next commit starts it again from its beginning instead of growing it. Called by the
    /// store writer after a batch's requests were answered; a failure leaves the log as it is.
    package func afterBatch() {
        guard checkpointer.takeCatchUp() else { return }
        connection.withLock { connection in _ = try? connection.checkpointPassively() }
    }

    /// Deletes the record of `id`.
    package func remove(_ id: SessionID) throws(StoreError) {
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.remove, .storeKey(id))
        }
    }

    /// Deletes every record last used before `accessedBefore` or created before `createdBefore`;
    /// returns how many.
    package func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        try connection.withLock { connection throws(StoreError) in
            try connection.run(SQL.removeExpired, .integer(accessedBefore), .integer(createdBefore))
        }
    }

    /// Closes the file: checkpointed, its `-wal` and `-shm` files removed. Later calls throw.
    package func close() {
        checkpointer.stop()
        // The reader too: the last connection to close checkpoints the log and removes it, and
        // one left open (its backend still referenced at exit) left the -wal and -shm files.
        reader.withLock { $0.close() }
        connection.withLock { $0.close() }
    }

    deinit { checkpointer.stop() }

    /// The number of records.
    package func count() throws(StoreError) -> Int {
        let counts = try connection.withLock { connection throws(StoreError) in
            try connection.query(SQL.count) { $0.int64(at: 0) }
        }
        return Int(counts.first ?? 0)
    }
}

extension SQLiteDefaultsBackend {
    /// The statements the store runs; each is prepared once and reused, with every value bound.
    private enum SQL {
        static let load: StaticString = "SELECT created, accessed, data, snapshot, user FROM sessions WHERE id = ?1"
        static let save: StaticString = """
            INSERT INTO sessions (id, created, accessed, data, snapshot, user) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (id) DO UPDATE SET created = excluded.created, accessed = excluded.accessed,
                data = excluded.data, snapshot = excluded.snapshot, user = excluded.user
            """
        // The same when the record exists with these times and user; changes no indexed column.
        static let saveKeepingTimes: StaticString = """
            UPDATE sessions SET data = ?4, snapshot = ?5
            WHERE id = ?1 AND created = ?2 AND accessed = ?3 AND user IS ?6
            """
        // The snapshot alone, when the record holds the values already (`valuesAsStored`).
        static let saveSnapshotKeepingTimes: StaticString = """
            UPDATE sessions SET snapshot = ?4 WHERE id = ?1 AND created = ?2 AND accessed = ?3 AND user IS ?5
            """
        static let touch: StaticString = "UPDATE sessions SET accessed = ?2 WHERE id = ?1"
        // OR REPLACE: a record already under the new id gives way, as a dictionary assignment would.
        static let rename: StaticString = "UPDATE OR REPLACE sessions SET id = ?2 WHERE id = ?1"
        static let remove: StaticString = "DELETE FROM sessions WHERE id = ?1"
        static let removeExpired: StaticString = "DELETE FROM sessions WHERE accessed < ?1 OR created < ?2"
        static let count: StaticString = "SELECT count(*) FROM sessions"
    }
}
