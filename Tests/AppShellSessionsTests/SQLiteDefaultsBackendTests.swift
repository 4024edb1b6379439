import AppShellSessions
import CSQLite
import Foundation
import Testing

/// What only the SQLite backend promises: a file that outlives the process, and refusing files it
/// cannot trust without ever changing them.
@Suite struct SQLiteDefaultsBackendTests {
    static let record = SessionRecord(
        values: ["user": .string("ann"), "isLogin": .bool(true), "ratio": .double(1.0), "blob": .data([0, 1, 255])],
        created: 1_700_000_000, accessed: 1_700_000_500)

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Runs `body` and returns the `StoreError` it threw; records an issue when it threw none.
    static func storeError(_ body: () throws(StoreError) -> Void) -> StoreError? {
        do {
            try body()
            Issue.record("expected a StoreError, but nothing was thrown")
            return nil
        } catch {
            return error
        }
    }

    /// A save that keeps the record's times updates the other columns only (the indexes on the
    /// times stay as they are); one that changes them updates the indexes too.
    @Test func savesKeepingAndChangingTheTimesBothHold() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            let id = SessionID.random()
            var record = SessionRecord(values: ["n": .integer(1)], created: 10, accessed: 20, snapshot: [1])
            try backend.save(id, record)
            record.values["n"] = .integer(2)
            record.snapshot = [2, 2]
            try backend.applyAll([.save(id, record)])
            #expect(try backend.load(id) == record)
            record.values["n"] = .integer(3)
            record.snapshot = nil
            record.created = 11
            record.accessed = 30
            try backend.applyAll([.save(id, record)])
            #expect(try backend.load(id) == record)
            // Found by its new times, not by its old ones: the indexes followed.
            #expect(try backend.removeExpired(accessedBefore: 25, createdBefore: 11) == 0)
            #expect(try backend.count() == 1)
            #expect(try backend.removeExpired(accessedBefore: 31, createdBefore: 0) == 1)
            #expect(try RawDatabase(path).text("PRAGMA integrity_check") == "ok")
        }
    }

    @Test func dataSurvivesClosingAndReopening() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let first = SessionID.random()
            let second = SessionID.random()
            do {
                let backend = try SQLiteDefaultsBackend(path: path)
                try backend.save(first, Self.record)
                try backend.save(second, Self.record)
                try backend.touch(second, accessed: 42)
            }
            let reopened = try SQLiteDefaultsBackend(path: path)
            #expect(try reopened.load(first) == Self.record)
            #expect(try reopened.load(second)?.accessed == 42)
            #expect(try reopened.count() == 2)
        }
    }

    @Test func aCommittedWriteIsOnDiskWithoutAClose() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let copy = directory.path + "/copy.sqlite"
            let id = SessionID.random()
            let backend = try SQLiteDefaultsBackend(path: path)
            try backend.save(id, Self.record)
            // Copying the files while the writer is still open is what a killed process leaves behind:
            // no close, no checkpoint, the commit only in the write-ahead log.
            #expect(Self.exists(path + "-wal"))
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            let recovered = try SQLiteDefaultsBackend(path: copy)
            #expect(try recovered.load(id) == Self.record)
            withExtendedLifetime(backend) {}
        }
    }

    /// What a stopping server does: the log is checkpointed into the file and removed, and the
    /// store refuses any later use.
    @Test func closeLeavesOneFileAndRefusesLaterUse() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let id = SessionID.random()
            let backend = try SQLiteDefaultsBackend(path: path)
            try backend.save(id, Self.record)
            #expect(Self.exists(path + "-wal"))
            backend.close()
            #expect(!Self.exists(path + "-wal"))
            #expect(!Self.exists(path + "-shm"))
            #expect(Self.storeError { () throws(StoreError) in try backend.save(id, Self.record) } != nil)
            backend.close()
            #expect(try SQLiteDefaultsBackend(path: path).load(id) == Self.record)
        }
    }

    @Test func missingParentDirectoriesAreCreated() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/data/deeper/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            try backend.save(SessionID.random(), Self.record)
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.path + "/data/deeper", isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            #expect(Self.exists(path))
        }
    }

    @Test func aFileOfGarbageIsRefusedAndLeftAlone() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let garbage = Data(String(repeating: "this is not an SQLite database\n", count: 200).utf8)
            try garbage.write(to: URL(fileURLWithPath: path))
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            let description = try #require(error).description
            #expect(description.contains(path))
            #expect(description.contains("not a database"))
            #expect(description.contains("(code 26)"))
            #expect(try Self.bytes(path) == garbage)
            #expect(!Self.exists(path + "-wal"))
            #expect(!Self.exists(path + "-journal"))
        }
    }

    @Test func aDamagedDatabaseIsRefused() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            do {
                let backend = try SQLiteDefaultsBackend(path: path)
                for _ in 0..<50 { try backend.save(SessionID.random(), Self.record) }
            }
            // Page 2 is the sessions table; the closing connection checkpointed it into the file.
            var bytes = try Self.bytes(path)
            #expect(bytes.count >= 3 * 4096)
            bytes.replaceSubrange(4096..<4096 + 64, with: Data(repeating: 0xFF, count: 64))
            try bytes.write(to: URL(fileURLWithPath: path))
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            let description = try #require(error).description
            #expect(description.contains(path))
            #expect(description.contains("malformed") || description.contains("damaged"))
            #expect(try Self.bytes(path) == bytes)
        }
    }

    @Test func aDirectoryIsRefused() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            let description = try #require(error).description
            #expect(description.contains(path))
            #expect(description.contains("Is a directory"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == [])
        }
    }

    @Test(.enabled(if: geteuid() != 0, "root reads and writes whatever the permissions say"))
    func aFileWithoutPermissionsIsRefused() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            do { try SQLiteDefaultsBackend(path: path).save(SessionID.random(), Self.record) }
            let contents = try Self.bytes(path)
            // Read-only: SQLite would quietly open it read-only and fail only at the first write.
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            let readOnly = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            #expect(try #require(readOnly).description.contains("read-only"))
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
            let unreadable = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            #expect(try #require(unreadable).description.contains("Permission denied"))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            #expect(try Self.bytes(path) == contents)
        }
    }

    @Test func aPathBelowARegularFileIsRefused() throws {
        // Tests run as root, which chmod 000 does not stop: a parent that is a file fails for everyone.
        try BackendTestDirectory.with { directory throws in
            let file = directory.path + "/afile"
            let contents = Data("a regular file".utf8)
            try contents.write(to: URL(fileURLWithPath: file))
            let path = file + "/db.sqlite"
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            let description = try #require(error).description
            #expect(description.contains(path))
            #expect(description.contains("not a directory"))
            #expect(try Self.bytes(file) == contents)
        }
    }

    @Test func aNewerSchemaIsRefusedNamingBothVersions() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            do { _ = try SQLiteDefaultsBackend(path: path) }
            do {
                let raw = try RawDatabase(path)
                try raw.execute("PRAGMA user_version = 999")
            }
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            let description = try #require(error).description
            #expect(description.contains(path))
            #expect(description.contains("999"))
            #expect(description.contains("the 5 this program knows"))
            #expect(try RawDatabase(path).integer("PRAGMA user_version") == 999)
        }
    }

    @Test func aDatabaseOfAnotherProgramIsRefused() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/other.sqlite"
            do {
                let raw = try RawDatabase(path)
                try raw.execute("CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('kept')")
            }
            let error = Self.storeError { () throws(StoreError) in _ = try SQLiteDefaultsBackend(path: path) }
            #expect(try #require(error).description.contains("not a session store"))
            let raw = try RawDatabase(path)
            #expect(try raw.integer("SELECT count(*) FROM sqlite_schema WHERE name = 'sessions'") == 0)
            #expect(try raw.integer("SELECT count(*) FROM accounts") == 1)
        }
    }

    @Test func theJournalIsAWriteAheadLog() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            try backend.save(SessionID.random(), Self.record)
            #expect(Self.exists(path + "-wal"))
            // journal_mode=WAL is recorded in the file, so a second connection sees it.
            #expect(try RawDatabase(path).text("PRAGMA journal_mode") == "wal")
            #expect(try RawDatabase(path).integer("PRAGMA user_version") == 5)
            withExtendedLifetime(backend) {}
        }
    }

    @Test func aVersion1FileIsMigratedKeepingItsRecords() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let id = SessionID.random()
            do {
                let raw = try RawDatabase(path)
                try raw.execute(
                    """
                    CREATE TABLE sessions (id BLOB PRIMARY KEY, created INTEGER NOT NULL, accessed INTEGER NOT NULL,
                        data TEXT NOT NULL) WITHOUT ROWID;
                    CREATE INDEX sessions_accessed ON sessions (accessed);
                    CREATE INDEX sessions_created ON sessions (created);
                    PRAGMA user_version = 1;
                    INSERT INTO sessions VALUES (x'\(id.bytes.map { String(format: "%02x", $0) }.joined())', 10, 20, '{"isLogin":true}');
                    """)
            }
            let backend = try SQLiteDefaultsBackend(path: path)
            let record = try #require(try backend.load(id))
            #expect(record == SessionRecord(values: ["isLogin": .bool(true)], created: 10, accessed: 20, snapshot: nil))
            var updated = record
            updated.snapshot = Array("{\"root\":\"main\"}".utf8)
            try backend.save(id, updated)
            #expect(try backend.load(id) == updated)
            #expect(try RawDatabase(path).integer("PRAGMA user_version") == 5)
        }
    }

    /// Version 3 moves the sessions from a table without row ids (where a 2.5 KB row spilled into
    /// an overflow page, freed and allocated again at every save) to one with row ids, in one
    /// transaction at open: every session of a version-2 file is there afterwards, as it was.
    @Test func aVersion2FileMovesToARowidTableKeepingEverySession() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            var expected: [(SessionID, SessionRecord)] = []
            for index in 0..<300 {
                let snapshot: [UInt8]? =
                    index % 7 == 0 ? nil : (0..<2_500).map { UInt8(truncatingIfNeeded: $0 &* index) }
                let record = SessionRecord(
                    values: ["n": .integer(index), "user": .string("user \(index)")],
                    created: Int64(1_000 + index), accessed: Int64(5_000 + index), snapshot: snapshot)
                expected.append((SessionID.random(), record))
            }
            do {
                let raw = try RawDatabase(path)
                try raw.execute(
                    """
                    CREATE TABLE sessions (id BLOB PRIMARY KEY, created INTEGER NOT NULL, accessed INTEGER NOT NULL,
                        data TEXT NOT NULL, snapshot BLOB) WITHOUT ROWID;
                    CREATE INDEX sessions_accessed ON sessions (accessed);
                    CREATE INDEX sessions_created ON sessions (created);
                    PRAGMA user_version = 2;
                    """)
                for (id, record) in expected {
                    let data = String(decoding: DefaultsValue.encode(record.values), as: UTF8.self)
                    let snapshot = record.snapshot.map { "x'\(Self.hex($0))'" } ?? "NULL"
                    try raw.execute(
                        """
                        INSERT INTO sessions VALUES (x'\(Self.hex(id.bytes))', \(record.created), \(record.accessed),
                            '\(data)', \(snapshot))
                        """)
                }
            }
            let backend = try SQLiteDefaultsBackend(path: path)
            // The copy was checkpointed into the file at once: no log as large as the store is left.
            let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
            #expect(log == 0)
            for (id, record) in expected { #expect(try backend.load(id) == record) }
            #expect(try backend.count() == expected.count)
            let raw = try RawDatabase(path)
            #expect(try raw.integer("PRAGMA user_version") == 5)
            let table = try #require(try raw.text("SELECT sql FROM sqlite_schema WHERE name = 'sessions'"))
            #expect(!table.uppercased().contains("WITHOUT ROWID"))
            // The sessions, and since version 5 the accounts and the users' stores.
            #expect(try raw.integer("SELECT count(*) FROM sqlite_schema WHERE type = 'table'") == 3)
            #expect(
                try raw.integer(
                    "SELECT count(*) FROM sqlite_schema WHERE name IN ('sessions_accessed', 'sessions_created')") == 2)
            // The indexes are there and right: the 100 oldest by `accessed` go.
            #expect(try backend.removeExpired(accessedBefore: 5_100, createdBefore: 0) == 100)
            #expect(try backend.count() == 200)
            // Saves, renames and removals work on the new table.
            let (id, record) = expected[150]
            var changed = record
            changed.snapshot = [9, 9, 9]
            try backend.save(id, changed)
            let newID = SessionID.random()
            try backend.rename(id, to: newID)
            #expect(try backend.load(id) == nil)
            #expect(try backend.load(newID) == changed)
            try backend.remove(newID)
            #expect(try backend.count() == 199)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: ["not json", "[1, 2]", "{\"k\": null}", "{\"k\": {\"data\": \"!!\"}}", ""])
    func aRecordWithUndecodableDataMakesLoadThrow(data: String) throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            let broken = SessionID.random()
            let intact = SessionID.random()
            try backend.save(broken, Self.record)
            try backend.save(intact, Self.record)
            try RawDatabase(path).update(broken, data: data)
            let error = Self.storeError { () throws(StoreError) in _ = try backend.load(broken) }
            #expect(try #require(error).description.contains(path))
            #expect(try backend.load(intact) == Self.record)
        }
    }
}

/// A connection opened with the C API, to look at and tamper with a file behind the backend's back.
final class RawDatabase {
    struct Failure: Error, CustomStringConvertible { let description: String }

    private let handle: OpaquePointer

    init(_ path: String) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let opened else {
            sqlite3_close_v2(opened)
            throw Failure(description: "open \(path): \(code)")
        }
        handle = opened
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure() }
    }

    func text(_ sql: String) throws -> String? {
        try withRow(sql) { statement in sqlite3_column_text(statement, 0).map { String(cString: $0) } }
    }

    func integer(_ sql: String) throws -> Int64? {
        try withRow(sql) { statement in sqlite3_column_int64(statement, 0) }
    }

    /// Writes `data` into the record of `id` as the TEXT it would have been saved as.
    func update(_ id: SessionID, data: String) throws {
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(handle, "UPDATE sessions SET data = ?2 WHERE id = ?1", -1, &statement, nil) == SQLITE_OK
        else { throw failure() }
        defer { sqlite3_finalize(statement) }
        let bytes = id.storeKey.bytes
        sqlite3_bind_blob(statement, 1, bytes, Int32(bytes.count), appshell_sqlite_transient)
        sqlite3_bind_text(statement, 2, data, -1, appshell_sqlite_transient)
        guard sqlite3_step(statement) == SQLITE_DONE, sqlite3_changes(handle) == 1 else { throw failure() }
    }

    private func withRow<Value>(_ sql: String, _ read: (OpaquePointer) -> Value?) throws -> Value? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw failure() }
        defer { sqlite3_finalize(statement) }
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return read(statement)
        case SQLITE_DONE: return nil
        default: throw failure()
        }
    }

    private func failure() -> Failure { Failure(description: String(cString: sqlite3_errmsg(handle))) }
}
