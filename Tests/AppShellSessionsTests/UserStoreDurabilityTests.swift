import AppShellSessions
import DefaultsBackendTestSupport
import Foundation
import Testing

/// What a second process finds: a reopened SQLite file, a new connection to Redis (another
/// instance), and a file of the schema before accounts, migrated.
@Suite struct UserStoreDurabilityTests {
    /// Every kind of value, under a key of its own.
    static var everyKind: [String: DefaultsValue] {
        var values: [String: DefaultsValue] = [:]
        for (index, value) in DefaultsBackendConformanceTests.samples.enumerated() { values["key \(index)"] = value }
        values["all"] = .array(DefaultsBackendConformanceTests.samples)
        return values
    }

    /// Writes accounts, a logged-in session with a user write and a user's store through `first`;
    /// checks that `second`, opened afterwards, reads back exactly that.
    static func writeThenRead(
        first: () throws -> any DefaultsBackend, second: () throws -> any DefaultsBackend
    ) throws {
        let id = SessionID.random()
        let other = SessionID.random()
        var record = SessionRecord(values: ["step": .integer(1)], created: 1_700_000_000, accessed: 1_700_000_100)
        record.user = "ann"
        let hash = "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$c29tZWhhc2g"
        do {
            let backend = try first()
            defer { backend.close() }
            #expect(try backend.insertAccount(Account(name: "ann", passwordHash: hash, created: 1_700_000_000)))
            #expect(try backend.insertAccount(Account(name: "bob", passwordHash: "h", created: 1)))
            var written = record
            written.userWrite = UserWrite(user: "ann", values: everyKind, expectedVersion: 0)
            try backend.save(id, written)
            try backend.save(other, record)
            _ = try backend.writeUserStore(UserWrite(user: "bob", values: ["n": .double(1.0)], expectedVersion: 0))
        }
        let backend = try second()
        defer { backend.close() }
        #expect(try backend.account(named: "ann") == Account(name: "ann", passwordHash: hash, created: 1_700_000_000))
        #expect(try backend.accountNames() == ["ann", "bob"])
        #expect(try backend.load(id) == record)
        let store = try backend.userStore(of: "ann")
        #expect(store.version == 1)
        #expect(store.values == everyKind)
        #expect(try backend.userStore(of: "bob") == UserRecord(values: ["n": .double(1.0)], version: 1))
        #expect(try backend.removeSessions(of: "ann", except: other) == [id.storeKey])
        #expect(try backend.load(other) == record)
    }

    @Test func aReopenedSQLiteFileReadsBackWhatWasWritten() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            try Self.writeThenRead(
                first: { try SQLiteDefaultsBackend(path: path) }, second: { try SQLiteDefaultsBackend(path: path) })
        }
    }

    @Test func anotherRedisInstanceReadsBackWhatWasWritten() throws {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        try Self.writeThenRead(
            first: { try RedisDefaultsBackend(url: server.url, keyPrefix: prefix) },
            second: { try RedisDefaultsBackend(url: server.url, keyPrefix: prefix) })
    }

    /// A file of version 4 (before accounts) gets version 5's tables and column, every session
    /// kept, logged in as no one.
    @Test func aVersion4FileIsMigratedKeepingItsSessions() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let ids = (0..<20).map { _ in SessionID.random() }
            let values: [String: DefaultsValue] = ["isLogin": .bool(true), "name": .string("ann")]
            do {
                let raw = try RawDatabase(path)
                try raw.execute(
                    """
                    PRAGMA journal_mode = WAL;
                    CREATE TABLE sessions (id BLOB PRIMARY KEY NOT NULL, created INTEGER NOT NULL,
                        accessed INTEGER NOT NULL, data TEXT NOT NULL, snapshot BLOB);
                    CREATE INDEX sessions_accessed ON sessions (accessed);
                    CREATE INDEX sessions_created ON sessions (created);
                    PRAGMA user_version = 4;
                    """)
                let data = String(decoding: DefaultsValue.encode(values), as: UTF8.self)
                for (index, id) in ids.enumerated() {
                    try raw.execute(
                        """
                        INSERT INTO sessions VALUES (x'\(SQLiteDefaultsBackendTests.hex(id.storeKey.bytes))',
                            \(100 + index), \(200 + index), '\(data)', \(index % 2 == 0 ? "x'0102'" : "NULL"))
                        """)
                }
            }
            let backend = try SQLiteDefaultsBackend(path: path)
            #expect(try backend.count() == ids.count)
            for (index, id) in ids.enumerated() {
                let expected = SessionRecord(
                    values: values, created: Int64(100 + index), accessed: Int64(200 + index),
                    snapshot: index % 2 == 0 ? [1, 2] : nil)
                let loaded = try #require(try backend.load(id))
                #expect(loaded == expected)
                #expect(loaded.user == nil)
            }
            #expect(try RawDatabase(path).integer("PRAGMA user_version") == 5)
            #expect(
                try RawDatabase(path).integer("SELECT count(*) FROM sqlite_schema WHERE name = 'sessions_user'") == 1)
            // The migrated sessions take users and accounts like new ones.
            var loggedIn = try #require(try backend.load(ids[0]))
            loggedIn.user = "ann"
            try backend.save(ids[0], loggedIn)
            #expect(try backend.insertAccount(Account(name: "ann", passwordHash: "h", created: 1)))
            #expect(try backend.removeAccount(named: "ann")?.sessions == [ids[0].storeKey])
            #expect(try backend.count() == ids.count - 1)
        }
    }
}
