import AppShellConcurrency
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a store's file: its directory, its checks and its schema, one migration per version.
extension SQLiteDefaultsBackend {
    /// The schema, one step per version: step `n` (counting from 1) takes version `n - 1` to `n`.
    ///
    /// Append new steps; never edit one that has shipped, since files already record having run it.
    private static let migrations: [Migration] = [
        .sql(
            """
            CREATE TABLE sessions (
                id BLOB PRIMARY KEY,
                created INTEGER NOT NULL,
                accessed INTEGER NOT NULL,
                data TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX sessions_accessed ON sessions (accessed);
            CREATE INDEX sessions_created ON sessions (created);
            """),
        // Version 2: the app shell's controller tree, kept beside the defaults.
        .sql("ALTER TABLE sessions ADD COLUMN snapshot BLOB;"),
        // Version 3: a table with row ids. Without them, a row lives in an index b-tree, which
        // keeps at most about 1 000 bytes of a row in its page (4 KiB pages): a session's 2.5 KB
        // spilled into an overflow page, freed and allocated again at every save (2 pages written
        // to the log per save instead of 1; SQLite's own time per save about a third more). A
        // table's leaf keeps up to 4 061 bytes of a row. The sessions are copied in this step's
        // one transaction: a failure leaves the file at version 2, every session in it.
        .sql(
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
            """),
        // Version 4: rows keyed by the hash of the id, not the id (`keyRowsByHash`).
        .keyRowsByHash,
        // Version 5: accounts, the user's store of each, and the account a session is logged in
        // as. The index on `user` holds only logged-in sessions' rows: a save of any other session
        // writes no entry of it. A table with row ids for the users' stores, which may hold tens of
        // kilobytes (see version 3); the accounts' rows are small.
        .sql(
            """
            ALTER TABLE sessions ADD COLUMN user TEXT;
            CREATE INDEX sessions_user ON sessions (user) WHERE user IS NOT NULL;
            CREATE TABLE accounts (
                name TEXT PRIMARY KEY NOT NULL,
                password_hash TEXT NOT NULL,
                created INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE user_stores (
                name TEXT PRIMARY KEY NOT NULL,
                data TEXT NOT NULL,
                version INTEGER NOT NULL
            );
            """),
    ]

    /// The last version whose step rewrites every session (3 copies them, 4 changes their keys):
    /// migrating a file from before it rebuilds the file and empties the log afterwards.
    private static let lastRewritingVersion = 4

    /// One step of the schema.
    private enum Migration {
        /// Statements run as they are.
        case sql(String)
        /// The ids of every row replaced by their store keys (`SessionStoreKey`), in Swift: SQLite
        /// has no BLAKE2b.
        case keyRowsByHash
    }

    /// Version 4: every row's id, the session's cookie until then, replaced by its store key, in
    /// the migration's one transaction (a failure leaves the file at version 3, every session in
    /// it). `secure_delete` zeroes the bytes the ids leave behind in the pages instead of leaving
    /// them in free space, and the log they were written to is emptied after the migration
    /// (`migrate`); the file, made 0644 by the versions before, is made its owner's only.
    private static func keyRowsByHash(_ connection: SQLiteConnection) throws(StoreError) {
        try SQLiteConnection.restrictToOwner(connection.path)
        let ids = try connection.query("SELECT id FROM sessions") { $0.blob(at: 0) }
        for raw in ids {
            // A row whose id is not 32 bytes is no session's: no cookie could name it.
            guard let id = SessionID(bytes: raw) else {
                try connection.run("DELETE FROM sessions WHERE id = ?1", .blob(raw))
                continue
            }
            try connection.run("UPDATE sessions SET id = ?2 WHERE id = ?1", .blob(raw), .storeKey(id))
        }
    }

    /// Checks the file and brings its settings and schema to what the store needs.
    static func prepare(_ connection: SQLiteConnection) throws(StoreError) {
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

    /// Copies the log into the file and empties it. A checkpoint that finds a reader in the way
    /// answers "busy" rather than failing, with the log (and the file's old pages, the raw ids of a
    /// version-3 store among them) left as they were: it is asked again until it is done, for up to
    /// two seconds, and said on standard error if it never is.
    private static func emptyLog(_ connection: SQLiteConnection) {
        for _ in 0..<200 {
            let busy = (try? connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int64(at: 0) })?.first
            if busy == 0 { return }
            usleep(10_000)
        }
        Logger.appshell.notice(
            "store \(connection.path): the log could not be emptied after the migration; "
                + "it is copied into the file at the next checkpoint")
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
            // A migration that copied the sessions (version 3) or changed every key (version 4)
            // wrote them all to the log: copy it into the file and empty it now, rather than
            // leaving a log as large as the store (or holding the ids the file no longer does).
            // Rebuilt first (VACUUM): `secure_delete` zeroes what a row leaves behind, but not
            // every copy a page split makes of it — one run in about fifteen of the migration
            // test, loaded, found a raw id left in the file. The rebuilt file holds live rows only.
            if found > 0 && found < lastRewritingVersion {
                try? connection.execute("VACUUM")
                emptyLog(connection)
            }
        }
        // Set for the migrations (a connection's setting, and not one a transaction may change):
        // what they replace is overwritten with zeros in the pages rather than left in free space.
        let secureDelete = try connection.query("PRAGMA secure_delete") { $0.int64(at: 0) }.first ?? 0
        if found < known { try connection.execute("PRAGMA secure_delete = ON") }
        defer { if found < known { try? connection.execute("PRAGMA secure_delete = \(secureDelete)") } }
        for (offset, step) in migrations.enumerated() where offset + 1 > found {
            let version = offset + 1
            try connection.transaction { () throws(StoreError) in
                // Read again under the write lock: another process may have migrated meanwhile.
                let current = try userVersion(connection)
                guard current < version else { return }
                if current == 0, try holdsTables(connection) {
                    throw StoreError(
                        "store \(path): the database holds tables but no schema version; it is not a session store")
                }
                switch step {
                case .sql(let sql): try connection.execute(sql)
                case .keyRowsByHash: try keyRowsByHash(connection)
                }
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
    static func createParentDirectory(of path: String) throws(StoreError) {
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
