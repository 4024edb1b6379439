import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open SQLite database file: the only code in the module that holds a `sqlite3*` handle.
///
/// It is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's "multi-thread" mode). In that mode SQLite takes
/// no lock of its own around a connection, and its threading rules allow a connection — and every
/// statement prepared on it — to be used by one thread at a time only. The owner serialises every
/// use behind its own lock (`SQLiteDefaultsBackend` keeps the connection in a `Locked`), so SQLite's
/// per-connection mutex would only be a second lock taken for nothing.
final class SQLiteConnection {
    /// The file as the caller named it: every error names it, so operators can tell stores apart.
    let path: String
    private let handle: OpaquePointer
    /// The prepared statements, by where their SQL text is (`statement(_:)`).
    private var statements: [UnsafeRawPointer: SQLiteStatement] = [:]
    /// Told of every commit (see `reportCommits(to:)`); held here as long as SQLite may call it.
    private var commitObserver: SQLiteCheckpointer?
    /// Set by `close`: the handle is gone, and every use throws.
    private var closed = false

    /// SQLite's process-wide settings, made once, before the process's first connection opens
    /// (SQLite refuses them later; a process that opened one elsewhere first keeps SQLite's).
    ///
    /// No count of SQLite's memory (`SQLITE_CONFIG_MEMSTATUS`): kept, it takes a process-wide
    /// mutex at every allocation and free SQLite makes — 18 lock and unlock pairs per save on the
    /// store writer (callgrind), and on every server thread that loads a session. Nothing here
    /// reads the count (`sqlite3_memory_used`, a soft heap limit).
    private static let configured: Void = { _ = appshell_sqlite_count_no_memory() }()

    /// Opens (creating when missing) the database file at `path` for reading and writing.
    init(path: String) throws(StoreError) {
        _ = SQLiteConnection.configured
        self.path = path
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else {
            // SQLite returns no handle only when it could not allocate one.
            throw StoreError("store \(path): open: \(SQLiteConnection.describe(code: code))")
        }
        guard code == SQLITE_OK else {
            // A failed open still returns a handle (holding the message) that must be closed.
            let error = SQLiteConnection.error(opened, code, path: path, operation: "open")
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
    }

    deinit { close() }

    /// Closes the file: the last connection to close checkpoints the write-ahead log into the
    /// database and removes the `-wal` and `-shm` files, so a stopped server leaves one file.
    /// Every later `execute` or `statement` throws.
    func close() {
        guard !closed else { return }
        closed = true
        // Finalized before the close, or sqlite3_close_v2 would keep the handle alive as a zombie.
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    private func checkOpen() throws(StoreError) {
        if closed { throw StoreError("store \(path): closed (the server is stopping)") }
    }

    /// Whether SQLite opened the file read-only.
    ///
    /// `SQLITE_OPEN_READWRITE` quietly falls back to read-only when the file is write-protected, which
    /// would otherwise only show up at the first write.
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// The number of rows the last finished INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Runs SQL that binds no values (schema changes, pragmas, transaction control), one statement
    /// after the other.
    func execute(_ sql: String) throws(StoreError) {
        try checkOpen()
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(handle, code, path: path, operation: "execute " + SQLiteConnection.quote(sql))
        }
    }

    /// The prepared statement for `sql`, reset and with no values bound (every use resets it
    /// after it ran: `run`, `query`).
    ///
    /// Statements are kept and reused: preparing parses and plans the SQL, which costs more than
    /// most of the queries the store runs. They are kept by where their text is: the SQL is a
    /// constant of the program, and hashing its address is one word where hashing its text was
    /// a hundred bytes (half a microsecond of the store writer's work per write, perf).
    func statement(_ sql: StaticString) throws(StoreError) -> SQLiteStatement {
        try checkOpen()
        let key = UnsafeRawPointer(sql.utf8Start)
        if let cached = statements[key] { return cached }
        var prepared: OpaquePointer?
        let code = sql.withUTF8Buffer { text in
            text.withMemoryRebound(to: CChar.self) { text in
                sqlite3_prepare_v3(
                    handle, text.baseAddress, Int32(text.count), UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
            }
        }
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(
                handle, code, path: path, operation: "prepare " + SQLiteConnection.quote(sql.description))
        }
        guard let prepared else {
            throw StoreError(
                "store \(path): prepare \(SQLiteConnection.quote(sql.description)): the SQL holds no statement")
        }
        let statement = SQLiteStatement(prepared, sql: sql.description, path: path)
        statements[key] = statement
        return statement
    }

    /// Finalizes every cached statement, for statements that will not run again (those run at open).
    func forgetStatements() { statements.removeAll() }

    /// Runs `sql` to completion with `values` bound in order; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: StaticString, _ values: SQLiteValue...) throws(StoreError) -> Int {
        let statement = try statement(sql)
        // Reset when done: a statement left mid-way keeps its implicit transaction alive.
        try statement.withBound(values) { () throws(StoreError) in while try statement.step() {} }
        return changes
    }

    /// Runs the query `sql` with `values` bound in order and returns what `row` makes of each row.
    func query<Row>(
        _ sql: StaticString, _ values: SQLiteValue..., row: (SQLiteStatement) throws(StoreError) -> Row
    ) throws(StoreError) -> [Row] {
        let statement = try statement(sql)
        // Reset when done: a read left mid-way would hold its snapshot open and keep WAL
        // checkpoints from finishing.
        return try statement.withBound(values) { () throws(StoreError) -> [Row] in
            var rows: [Row] = []
            while try statement.step() { rows.append(try row(statement)) }
            return rows
        }
    }

    /// Tells `checkpointer` the log's size after every commit on this connection, instead of
    /// checkpointing here: SQLite's automatic checkpoint would run on the committing thread (see
    /// `SQLiteCheckpointer`). A WAL hook replaces the automatic checkpoint.
    func reportCommits(to checkpointer: SQLiteCheckpointer) {
        commitObserver = checkpointer
        sqlite3_wal_hook(handle, walCommitHook, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Copies the write-ahead log into the database as far as no reader still needs it, without
    /// waiting for or blocking readers and writers (`SQLITE_CHECKPOINT_PASSIVE`); syncs the log and
    /// the file when it copied anything. Returns the frames in the log and those copied.
    @discardableResult
    func checkpointPassively() throws(StoreError) -> (frames: Int, copied: Int) {
        try checkOpen()
        var frames: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied)
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(handle, code, path: path, operation: "checkpoint")
        }
        return (Int(frames), Int(copied))
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back when it throws.
    ///
    /// IMMEDIATE takes the write lock at the start, so a transaction that reads and then writes
    /// cannot fail half-way with SQLITE_BUSY because another connection wrote in between.
    ///
    /// Both are prepared statements kept like the others: `execute` would parse them again at
    /// every transaction (10 000 instructions per group commit, callgrind).
    func transaction<Result>(_ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        try run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // Some errors (SQLITE_FULL, SQLITE_IOERR, …) roll back on their own; a second ROLLBACK would fail.
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// The error for a failed call: the store, what was being done, SQLite's message and the code.
    static func error(_ handle: OpaquePointer?, _ code: Int32, path: String, operation: String) -> StoreError {
        // The connection's message belongs to its last error, which is not always this one.
        let message: String
        if let handle, sqlite3_extended_errcode(handle) == code {
            message = String(cString: sqlite3_errmsg(handle))
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        // SQLite says only "unable to open database file" or "disk I/O error": the system's reason
        // (permission denied, is a directory, no space left) is what an operator can act on.
        var reason = ""
        let primary = code & 0xFF
        if let handle, primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR, sqlite3_system_errno(handle) != 0 {
            reason = ": " + String(cString: strerror(sqlite3_system_errno(handle)))
        }
        return StoreError("store \(path): \(operation): \(message)\(reason) (\(codeLabel(code)))")
    }

    /// SQLite's text for `code` with its number, for errors that have no connection.
    static func describe(code: Int32) -> String {
        "\(String(cString: sqlite3_errstr(code))) (\(codeLabel(code)))"
    }

    /// The result code as sqlite3.h numbers it: "code 26", or "code 10, extended 522" (SQLite
    /// names codes only in its header; its words for them are `sqlite3_errstr`'s, in the message).
    static func codeLabel(_ code: Int32) -> String {
        let primary = code & 0xFF
        return primary == code ? "code \(code)" : "code \(primary), extended \(code)"
    }

    /// SQL for an error message: on one line, and short enough to read.
    static func quote(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return "\"" + (line.count > 80 ? line.prefix(79) + "…" : line) + "\""
    }
}

/// SQLite's WAL hook: called on the committing thread after each commit, with the frames now in
/// the log; passes them to the connection's `SQLiteCheckpointer`.
private let walCommitHook:
    @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        context, _, _, frames in
        guard let context else { return SQLITE_OK }
        Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
        return SQLITE_OK
    }
