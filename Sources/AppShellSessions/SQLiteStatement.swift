import CSQLite

/// A value bound to a `?` parameter of a statement.
enum SQLiteValue {
    /// An INTEGER.
    case integer(Int64)
    /// A BLOB.
    case blob([UInt8])
    /// A session id's 32 bytes as a BLOB (`SessionID.bytes`, bound without making that array).
    case id(SessionID)
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

    /// Binds `values` to parameters 1, 2, … in order.
    func bind(_ values: [SQLiteValue]) throws(StoreError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let number): try bind(number, at: index)
            case .blob(let bytes): try bind(blob: bytes, at: index)
            case .id(let id): try bind(id: id, at: index)
            case .text(let bytes): try bind(text: bytes, at: index)
            case .null: try bindNull(at: index)
            }
        }
    }

    /// Binds an integer to parameter `index` (1-based).
    func bind(_ value: Int64, at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, index, value), "bind")
    }

    /// Binds a copy of `blob` to parameter `index` (1-based).
    func bind(blob: [UInt8], at index: Int32) throws(StoreError) {
        let code = blob.withUnsafeBytes { bytes in
            // A null pointer would bind NULL rather than an empty blob.
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), appshell_sqlite_transient)
        }
        try check(code, "bind")
    }

    /// Binds a copy of `id`'s 32 bytes to parameter `index` (1-based).
    func bind(id: SessionID, at index: Int32) throws(StoreError) {
        let code = id.withUnsafeBytes { bytes in
            sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), appshell_sqlite_transient)
        }
        try check(code, "bind")
    }

    /// Binds a copy of the UTF-8 `text` to parameter `index` (1-based).
    func bind(text: [UInt8], at index: Int32) throws(StoreError) {
        let code = text.withUnsafeBufferPointer { bytes in
            // A null pointer would bind NULL rather than an empty string.
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, appshell_sqlite_transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                sqlite3_bind_text64(
                    handle, index, characters, UInt64(bytes.count), appshell_sqlite_transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(code, "bind")
    }

    /// Binds NULL to parameter `index` (1-based).
    func bindNull(at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_null(handle, index), "bind")
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
