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
public final class SQLiteDefaultsBackend: DefaultsBackend {
    /// The database file, as given to `init(path:)`.
    public let path: String
    // One connection writes for the process: SQLite serialises writers to a file anyway, and one
    // connection used under one lock keeps to its rule of one thread per connection at a time.
    private let connection: Locked<SQLiteConnection>
    // Loads use a second one: in WAL mode a reader never waits for the writer, so a request that
    // loads a session is not held up by a group commit in progress.
    private let reader: Locked<SQLiteConnection>
    // Checkpoints on a thread of its own, so that no commit waits for one (see `SQLiteCheckpointer`).
    let checkpointer: SQLiteCheckpointer

    /// Opens the store at `path`, creating the file and its parent directories when missing.
    public init(path: String) throws(StoreError) {
        try SQLiteDefaultsBackend.createParentDirectory(of: path)
        try SQLiteConnection.checkFile(at: path)
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
    public func load(_ id: SessionID) throws(StoreError) -> SessionRecord? {
        let rows = try reader.withLock { connection throws(StoreError) in
            try connection.query(SQL.load, .blob(id.bytes)) { row in
                (
                    created: row.int64(at: 0), accessed: row.int64(at: 1), data: row.text(at: 2),
                    snapshot: row.isNull(at: 3) ? nil : row.blob(at: 3)
                )
            }
        }
        guard let row = rows.first else { return nil }
        // Decoded outside the lock: parsing is the slow part and needs no connection.
        guard let values = DefaultsValue.decode(row.data) else {
            throw StoreError("store \(path): the record of session \(id) holds data that is not a defaults object")
        }
        return SessionRecord(values: values, created: row.created, accessed: row.accessed, snapshot: row.snapshot)
    }

    /// Inserts or replaces the record of `id`.
    public func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) {
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
        let kept = try connection.run(
            SQL.saveKeepingTimes, .blob(id.bytes), .integer(record.created), .integer(record.accessed), .text(data),
            snapshot)
        guard kept == 0 else { return }
        _ = try connection.run(
            SQL.save, .blob(id.bytes), .integer(record.created), .integer(record.accessed), .text(data), snapshot)
    }

    /// Sets the `accessed` time of `id`'s record, if there is one.
    public func touch(_ id: SessionID, accessed: Int64) throws(StoreError) {
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.touch, .blob(id.bytes), .integer(accessed))
        }
    }

    /// Moves the record of `id` to `newID`, replacing any record `newID` had; does nothing when
    /// `id` has no record.
    public func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) {
        // One statement is one transaction in SQLite: the row changes its key atomically, and no
        // reader sees both ids or neither.
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.rename, .blob(id.bytes), .blob(newID.bytes))
        }
    }

    /// Moves the record of `id` to `newID` with `record` as its content, in one transaction.
    public func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        let data = DefaultsValue.encode(record.values)
        let snapshot = record.snapshot
        try connection.withLock { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.run(SQL.remove, .blob(id.bytes))
                _ = try connection.run(
                    SQL.save, .blob(newID.bytes), .integer(record.created), .integer(record.accessed), .text(data),
                    snapshot.map { .blob($0) } ?? .null)
            }
        }
    }

    /// Makes `writes` in order in one transaction (a group commit's batch: one commit, one WAL
    /// append, for the writes of many requests); when it throws, none of them holds.
    public func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        // Encoded before the lock: the lock is the store's one writer's, keep it short. The
        // snapshots' bytes are made here, on the writer's thread, not on the requests' threads.
        let encoded = writes.map { write -> (StoreWrite, [UInt8]?, SQLiteValue) in
            switch write {
            case .save(_, let record) where record.valuesAsStored:
                // Encoded only if the record is not found as it was (`save`).
                return (write, nil, record.snapshot.map { .blob($0) } ?? .null)
            case .save(_, let record), .renameReplacing(_, _, let record):
                return (write, DefaultsValue.encode(record.values), record.snapshot.map { .blob($0) } ?? .null)
            case .touch, .rename: return (write, [], .null)
            }
        }
        try connection.withLock { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                for (write, data, snapshot) in encoded {
                    try SQLiteDefaultsBackend.run(write, data: data, snapshot: snapshot, on: connection)
                }
            }
        }
    }

    private static func run(
        _ write: StoreWrite, data: [UInt8]?, snapshot: SQLiteValue, on connection: SQLiteConnection
    ) throws(StoreError) {
        switch write {
        case .save(let id, let record):
            if data == nil {
                // The values are stored already: the snapshot alone, if the record is as it was.
                let kept = try connection.run(
                    SQL.saveSnapshotKeepingTimes, .blob(id.bytes), .integer(record.created),
                    .integer(record.accessed), snapshot)
                guard kept == 0 else { return }
            }
            let data = data ?? DefaultsValue.encode(record.values)
            try save(id, record, data: data, snapshot: snapshot, on: connection)
        case .touch(let id, let accessed):
            _ = try connection.run(SQL.touch, .blob(id.bytes), .integer(accessed))
        case .rename(let id, let newID):
            _ = try connection.run(SQL.rename, .blob(id.bytes), .blob(newID.bytes))
        case .renameReplacing(let id, let newID, let record):
            _ = try connection.run(SQL.remove, .blob(id.bytes))
            _ = try connection.run(
                SQL.save, .blob(newID.bytes), .integer(record.created), .integer(record.accessed),
                .text(data ?? DefaultsValue.encode(record.values)), snapshot)
        }
    }

    /// Finishes the checkpoint that `checkpointer` left with a few frames to copy (those committed
    /// while it ran), at a moment when no transaction is open: after it the log is fully copied,
    /// and the next commit starts it again from its beginning instead of growing it. Called by the
    /// store writer after a batch's requests were answered; a failure leaves the log as it is.
    public func afterBatch() {
        guard checkpointer.takeCatchUp() else { return }
        connection.withLock { connection in _ = try? connection.checkpointPassively() }
    }

    /// Deletes the record of `id`.
    public func remove(_ id: SessionID) throws(StoreError) {
        try connection.withLock { connection throws(StoreError) in
            _ = try connection.run(SQL.remove, .blob(id.bytes))
        }
    }

    /// Deletes every record last used before `accessedBefore` or created before `createdBefore`;
    /// returns how many.
    public func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        try connection.withLock { connection throws(StoreError) in
            try connection.run(SQL.removeExpired, .integer(accessedBefore), .integer(createdBefore))
        }
    }

    /// Closes the file: checkpointed, its `-wal` and `-shm` files removed. Later calls throw.
    public func close() {
        checkpointer.stop()
        connection.withLock { $0.close() }
    }

    deinit { checkpointer.stop() }

    /// The number of records.
    public func count() throws(StoreError) -> Int {
        let counts = try connection.withLock { connection throws(StoreError) in
            try connection.query(SQL.count) { $0.int64(at: 0) }
        }
        return Int(counts.first ?? 0)
    }
}

extension SQLiteDefaultsBackend {
    /// The statements the store runs; each is prepared once and reused, with every value bound.
    private enum SQL {
        static let load = "SELECT created, accessed, data, snapshot FROM sessions WHERE id = ?1"
        static let save = """
            INSERT INTO sessions (id, created, accessed, data, snapshot) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (id) DO UPDATE SET created = excluded.created, accessed = excluded.accessed,
                data = excluded.data, snapshot = excluded.snapshot
            """
        // The same when the record exists with these times; changes no indexed column.
        static let saveKeepingTimes = """
            UPDATE sessions SET data = ?4, snapshot = ?5 WHERE id = ?1 AND created = ?2 AND accessed = ?3
            """
        // The snapshot alone, when the record holds the values already (`valuesAsStored`).
        static let saveSnapshotKeepingTimes = """
            UPDATE sessions SET snapshot = ?4 WHERE id = ?1 AND created = ?2 AND accessed = ?3
            """
        static let touch = "UPDATE sessions SET accessed = ?2 WHERE id = ?1"
        // OR REPLACE: a record already under the new id gives way, as a dictionary assignment would.
        static let rename = "UPDATE OR REPLACE sessions SET id = ?2 WHERE id = ?1"
        static let remove = "DELETE FROM sessions WHERE id = ?1"
        static let removeExpired = "DELETE FROM sessions WHERE accessed < ?1 OR created < ?2"
        static let count = "SELECT count(*) FROM sessions"
    }

    /// The schema, one step per version: step `n` (counting from 1) takes version `n - 1` to `n`.
    ///
    /// Append new steps; never edit one that has shipped, since files already record having run it.
    private static let migrations = [
        """
        CREATE TABLE sessions (
            id BLOB PRIMARY KEY,
            created INTEGER NOT NULL,
            accessed INTEGER NOT NULL,
            data TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX sessions_accessed ON sessions (accessed);
        CREATE INDEX sessions_created ON sessions (created);
        """,
        // Version 2: the app shell's controller tree, kept beside the defaults.
        "ALTER TABLE sessions ADD COLUMN snapshot BLOB;",
        // Version 3: a table with row ids. Without them, a row lives in an index b-tree, which
        // keeps at most about 1 000 bytes of a row in its page (4 KiB pages): a session's 2.5 KB
        // spilled into an overflow page, freed and allocated again at every save (2 pages written
        // to the log per save instead of 1; SQLite's own time per save about a third more). A
        // table's leaf keeps up to 4 061 bytes of a row. The sessions are copied in this step's
        // one transaction: a failure leaves the file at version 2, every session in it.
        """
        CREATE TABLE sessions_rows (
            id BLOB PRIMARY KEY NOT NULL,
            created INTEGER NOT NULL,
            accessed INTEGER NOT NULL,
            data TEXT NOT NULL,
            snapshot BLOB
        );
        INSERT INTO sessions_rows (id, created, accessed, data, snapshot)
            SELECT id, created, accessed, data, snapshot FROM sessions;
        DROP TABLE sessions;
        ALTER TABLE sessions_rows RENAME TO sessions;
        CREATE INDEX sessions_accessed ON sessions (accessed);
        CREATE INDEX sessions_created ON sessions (created);
        """,
    ]

    /// Checks the file and brings its settings and schema to what the store needs.
    private static func prepare(_ connection: SQLiteConnection) throws(StoreError) {
        let path = connection.path
        // Set before any I/O: another process holding the lock (a second instance migrating the
        // same file) is then waited for rather than reported as SQLITE_BUSY at once.
        try connection.execute("PRAGMA busy_timeout = 5000")
        // The first read of the file: a file that is not a database fails here, before anything is
        // written to it, and damage is found before we add to it.
        let check: [String]
        do {
            check = try connection.query("PRAGMA quick_check") { $0.string(at: 0) }
        } catch {
            throw StoreError(error.description + "; it is not a session store, or it is damaged, and was left as it is")
        }
        guard check == ["ok"] else {
            // A finding may span lines ("*** in database main ***" then "Page 2: …"): the
            // message stays one line.
            let lines = check.prefix(3).flatMap { $0.split(whereSeparator: \.isNewline) }
            let findings = lines.map(String.init).joined(separator: "; ")
            throw StoreError("store \(path): the database is damaged (quick_check: \(findings)); it was left as it is")
        }
        guard !connection.isReadOnly else {
            throw StoreError("store \(path): the file can only be opened read-only; the store needs to write to it")
        }
        // Returns the mode in force, which stays the old one when WAL is impossible (no shared
        // memory on the file system): concurrent readers and the durability above rely on WAL.
        let mode = try connection.query("PRAGMA journal_mode = WAL") { $0.string(at: 0) }
        guard mode == ["wal"] else {
            throw StoreError("store \(path): cannot switch to WAL (journal mode stays \(mode.first ?? "unknown"))")
        }
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.execute("PRAGMA foreign_keys = ON")
        try migrate(connection)
        // These ran once; the cache is for the statements every request runs.
        connection.forgetStatements()
    }

    /// Applies the migrations the file has not had, each with its version bump in one transaction.
    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        let path = connection.path
        let known = migrations.count
        let found = try userVersion(connection)
        guard found <= known else {
            throw StoreError(
                "store \(path): the schema is version \(found), newer than the \(known) this program knows; "
                    + "it was written by a newer version")
        }
        defer {
            // A migration that copied the sessions (version 3) wrote them all to the log: copy it
            // into the file and empty it now, rather than leaving a log as large as the store.
            if found > 0 && found < known { _ = try? connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { _ in 0 } }
        }
        for (offset, sql) in migrations.enumerated() where offset + 1 > found {
            let version = offset + 1
            try connection.transaction { () throws(StoreError) in
                // Read again under the write lock: another process may have migrated meanwhile.
                let current = try userVersion(connection)
                guard current < version else { return }
                if current == 0, try holdsTables(connection) {
                    throw StoreError(
                        "store \(path): the database holds tables but no schema version; it is not a session store")
                }
                try connection.execute(sql)
                // PRAGMA takes no bound parameters; the number is this file's own constant, not input.
                try connection.execute("PRAGMA user_version = \(version)")
            }
        }
    }

    private static func holdsTables(_ connection: SQLiteConnection) throws(StoreError) -> Bool {
        try connection.query("SELECT count(*) FROM sqlite_schema") { $0.int64(at: 0) } != [0]
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(StoreError) -> Int {
        Int(try connection.query("PRAGMA user_version") { $0.int64(at: 0) }.first ?? 0)
    }

    /// Creates the directories leading to `path` that are missing, as `mkdir -p` would (another
    /// process creating one at the same moment is success too).
    private static func createParentDirectory(of path: String) throws(StoreError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            // Foundation says "File exists" when the folder's name is taken by a file: say which.
            let existing = try? FileManager.default.attributesOfItem(atPath: directory)[.type] as? FileAttributeType
            if let existing, existing != .typeDirectory {
                throw StoreError(
                    "store \(path): cannot create its directory: \(directory) exists and is not a directory")
            }
            throw StoreError("store \(path): cannot create its directory \(directory): \(reason(error))")
        }
    }

    /// Why a file operation failed, as the system says it ("Not a directory", "Permission denied").
    private static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return "\(error)"
    }
}
