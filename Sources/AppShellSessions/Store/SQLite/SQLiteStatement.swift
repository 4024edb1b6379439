import CSQLite

/// A value bound to a `?` parameter of a statement.
enum SQLiteValue {
    /// An INTEGER.
    case integer(Int64)
    /// A BLOB.
    case blob([UInt8])
    /// The 32 bytes of a session's store key as a BLOB: the hash of its id (`SessionStoreKey`),
    /// never the id itself, which is the cookie. Every statement that names a session binds this.
    case storeKey(SessionID)
    /// TEXT, as UTF-8 bytes.
    case text([UInt8])
    /// NULL.
    case null
}

/// One prepared statement of a `SQLiteConnection`, finalized when released.
///
/// It belongs to its connection's thread rules: use it only while holding the connection's lock.
final class SQLiteStatement {
    /// The SQL text, for error messages.
    let sql: String
    private let handle: OpaquePointer
    private let path: String

    init(_ handle: OpaquePointer, sql: String, path: String) {
        self.handle = handle
        self.sql = sql
        self.path = path
    }

    deinit { sqlite3_finalize(handle) }

    /// Makes the statement ready to run again from the start, with no values bound.
    func reset() {
        // The code returned repeats the last step's error, which was already thrown.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to parameters 1, 2, … in order, runs `body`, then resets the statement
    /// (`reset`), also when binding or `body` throws.
    ///
    /// Bytes (blobs, text, ids) are bound without a copy (`SQLITE_STATIC`): each is borrowed for
    /// the call, and the statement is reset before its borrow ends, so SQLite never holds a
    /// pointer to bytes it does not own past it. A copy was an allocation, a copy of the
    /// session's snapshot and a free for each of the store writer's saves.
    func withBound<Result>(
        _ values: [SQLiteValue], _ body: () throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        do {
            return try bind(values, from: 0, body)
        } catch {
            reset()
            throw error
        }
    }

    /// Binds `values[index...]`, then runs `body` and resets, all within the borrows of their bytes.
    private func bind<Result>(
        _ values: [SQLiteValue], from index: Int, _ body: () throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        guard index < values.count else {
            defer { reset() }
            return try body()
        }
        let parameter = Int32(index + 1)
        switch values[index] {
        case .integer(let number):
            try check(sqlite3_bind_int64(handle, parameter, number), "bind")
        case .null:
            try check(sqlite3_bind_null(handle, parameter), "bind")
        case .blob(let bytes):
            return try bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) -> Result in
                try bind(blob: UnsafeRawBufferPointer(bytes), at: parameter)
                return try bind(values, from: index + 1, body)
            }
        case .storeKey(let id):
            return try id.storeKey.withUnsafeBytes { (bytes) throws(StoreError) -> Result in
                try bind(blob: bytes, at: parameter)
                return try bind(values, from: index + 1, body)
            }
        case .text(let bytes):
            return try bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) -> Result in
                try bind(text: UnsafeRawBufferPointer(bytes), at: parameter)
                return try bind(values, from: index + 1, body)
            }
        }
        return try bind(values, from: index + 1, body)
    }

    /// Binds `bytes` as a blob to parameter `index` (1-based), without a copy.
    private func bind(blob bytes: UnsafeRawBufferPointer, at index: Int32) throws(StoreError) {
        // A null pointer would bind NULL rather than an empty blob.
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return try check(sqlite3_bind_zeroblob(handle, index, 0), "bind")
        }
        try check(sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), appshell_sqlite_static), "bind")
    }

    /// Binds the UTF-8 `bytes` as text to parameter `index` (1-based), without a copy.
    private func bind(text bytes: UnsafeRawBufferPointer, at index: Int32) throws(StoreError) {
        // A null pointer would bind NULL rather than an empty string.
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return try check(sqlite3_bind_text(handle, index, "", 0, appshell_sqlite_transient), "bind")
        }
        let code = sqlite3_bind_text64(
            handle, index, base.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), appshell_sqlite_static,
            UInt8(SQLITE_UTF8))
        try check(code, "bind")
    }

    /// Runs the statement to its next row: `true` when a row is ready, `false` when it has finished.
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(code, "step")
        }
    }

    /// Whether column `column` (0-based) of the current row is NULL.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Column `column` (0-based) of the current row as an integer.
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Column `column` (0-based) of the current row as bytes (empty for NULL).
    func blob(at column: Int32) -> [UInt8] {
        // The pointer before the size, as SQLite documents: asking for the pointer may convert the value.
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// Column `column` (0-based) of the current row as UTF-8 bytes (empty for NULL).
    func text(at column: Int32) -> [UInt8] {
        guard let characters = sqlite3_column_text(handle, column) else { return [] }
        return Array(UnsafeBufferPointer(start: characters, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// Column `column` (0-based) of the current row as a string (empty for NULL).
    func string(at column: Int32) -> String { String(decoding: text(at: column), as: UTF8.self) }

    private func check(_ code: Int32, _ operation: String) throws(StoreError) {
        guard code == SQLITE_OK else { throw failure(code, operation) }
    }

    private func failure(_ code: Int32, _ operation: String) -> StoreError {
        SQLiteConnection.error(
            sqlite3_db_handle(handle), code, path: path, operation: operation + " " + SQLiteConnection.quote(sql))
    }
}
