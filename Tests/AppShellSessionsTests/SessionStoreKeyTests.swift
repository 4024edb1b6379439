import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// Issue 31 (6): a store names a session by the hash of its id, never by the id (the cookie), and
/// its files are its owner's only, so read access to a store is not a way into a session.
@Suite struct SessionStoreKeyTests {
    static let loggedIn = SessionRecord(
        values: ["username": .string("ann"), "isLogin": .bool(true)], created: 1_700_000_000,
        accessed: 1_700_000_500, snapshot: Array("{\"root\":\"main\"}".utf8))

    /// Whether `haystack` holds `id` as bytes or as its cookie text.
    static func holds(_ haystack: Data, _ id: SessionID) -> Bool {
        haystack.range(of: Data(id.bytes)) != nil || haystack.range(of: Data(id.text.utf8)) != nil
    }

    /// The bytes of the store's file, its log and its shared memory (those that exist).
    static func files(of path: String) -> [(String, Data)] {
        [path, path + "-wal", path + "-shm"].compactMap { file in
            FileManager.default.contents(atPath: file).map { (file, $0) }
        }
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func theKeyIsAHashOfTheIdAndTheSameForEqualIDs() throws {
        let id = SessionID.random()
        let copy = try #require(SessionID(id.text))
        #expect(id.storeKey == copy.storeKey)
        #expect(id.storeKey != SessionID.random().storeKey)
        #expect(id.storeKey.bytes != id.bytes)
        #expect(id.storeKey.bytes.count == 32)
        #expect(SessionStoreKey(text: id.storeKey.text) == id.storeKey)
        #expect(id.storeKey.text != id.text)
    }

    @Test func theSQLiteFileHoldsNoIdAndIsItsOwnersOnly() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            let ids = (0..<4).map { _ in SessionID.random() }
            try backend.save(ids[0], Self.loggedIn)
            try backend.applyAll([.save(ids[1], Self.loggedIn), .touch(ids[1], accessed: 1_700_000_600)])
            // A rotation: the id changes at login.
            try backend.rename(ids[1], to: ids[2], replacingWith: Self.loggedIn)
            try backend.applyAll([.rename(ids[0], to: ids[3])])
            #expect(try backend.load(ids[2]) == Self.loggedIn)
            #expect(try backend.load(ids[3]) == Self.loggedIn)
            #expect(try backend.load(ids[0]) == nil)
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(try Self.mode(file) == 0o600, "\(file)")
            }
            for (file, bytes) in Self.files(of: path) {
                for id in ids { #expect(!Self.holds(bytes, id), "\(file) holds a session id") }
            }
            backend.close()
            for (file, bytes) in Self.files(of: path) {
                for id in ids { #expect(!Self.holds(bytes, id), "\(file) holds a session id") }
            }
        }
    }

    /// A store of today's schema (version 3: rows keyed by the raw id, files 0644) opened by this
    /// version is converted once, keeping every session: the one logged in is still logged in by
    /// its cookie, and no file holds an id afterwards.
    @Test func aStoreOfRawIDsIsConvertedKeepingEverySession() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let ids = (0..<200).map { _ in SessionID.random() }
            do {
                let raw = try RawDatabase(path)
                try raw.execute(
                    """
                    PRAGMA journal_mode = WAL;
                    CREATE TABLE sessions (id BLOB PRIMARY KEY NOT NULL, created INTEGER NOT NULL,
                        accessed INTEGER NOT NULL, data TEXT NOT NULL, snapshot BLOB);
                    CREATE INDEX sessions_accessed ON sessions (accessed);
                    CREATE INDEX sessions_created ON sessions (created);
                    PRAGMA user_version = 3;
                    """)
                let data = String(decoding: DefaultsValue.encode(Self.loggedIn.values), as: UTF8.self)
                for (index, id) in ids.enumerated() {
                    let snapshot = index == 0 ? "x'\(SQLiteDefaultsBackendTests.hex(Self.loggedIn.snapshot!))'" : "NULL"
                    try raw.execute(
                        """
                        INSERT INTO sessions VALUES (x'\(SQLiteDefaultsBackendTests.hex(id.bytes))',
                            \(Self.loggedIn.created), \(Self.loggedIn.accessed + Int64(index)), '\(data)', \(snapshot))
                        """)
                }
            }
            #expect(try Self.mode(path) & 0o044 != 0, "the old store was readable by others")
            #expect(Self.files(of: path).contains { Self.holds($0.1, ids[0]) })
            let backend = try SQLiteDefaultsBackend(path: path)
            #expect(try backend.count() == ids.count)
            #expect(try backend.load(ids[0]) == Self.loggedIn)
            for (index, id) in ids.enumerated().dropFirst() {
                #expect(try backend.load(id)?.accessed == Self.loggedIn.accessed + Int64(index))
            }
            #expect(try RawDatabase(path).integer("PRAGMA user_version") == 5)
            // Logged in by its cookie, through the registry, as a request finds it.
            let registry = SessionRegistry(
                configuration: SessionConfiguration(), backend: backend, clock: { Self.loggedIn.accessed + 10 })
            var username: String?
            _ = try registry.enterSession(presentedID: ids[0].text) { session in
                #expect(!session.isNew)
                username = session.defaults.string(forKey: "username")
            }
            #expect(username == "ann")
            for (file, bytes) in Self.files(of: path) {
                #expect(!ids.contains { Self.holds(bytes, $0) }, "\(file) holds a session id")
                #expect(try Self.mode(file) == 0o600, "\(file)")
            }
            backend.close()
            // Opened again: nothing to convert, everything as it was.
            let again = try SQLiteDefaultsBackend(path: path)
            #expect(try again.load(ids[0]) == Self.loggedIn)
            #expect(try again.count() == ids.count)
            again.close()
        }
    }

    @Test func redisKeysHoldNoId() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        let ids = (0..<5).map { _ in SessionID.random() }
        try backend.save(ids[0], Self.loggedIn)
        try backend.touch(ids[0], accessed: Self.loggedIn.accessed + 1)
        try backend.rename(ids[0], to: ids[1])
        try backend.applyAll([.save(ids[2], Self.loggedIn), .renameReplacing(ids[2], to: ids[3], Self.loggedIn)])
        try backend.save(ids[4], Self.loggedIn)
        #expect(try backend.load(ids[1])?.values == Self.loggedIn.values)
        #expect(try backend.load(ids[3]) == Self.loggedIn)
        #expect(try backend.load(ids[0]) == nil)
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        let reply = try connection.command([Array("KEYS".utf8), Array((backend.keyPrefix + "*").utf8)])
        guard case .array(let found) = reply else {
            Issue.record("KEYS answered \(reply)")
            return
        }
        let keys = found.compactMap(\.text)
        #expect(Set(keys) == Set([ids[1], ids[3], ids[4]].map { backend.keyPrefix + "{" + $0.storeKey.text + "}" }))
        for key in keys {
            for id in ids { #expect(!key.contains(id.text), "\(key) names a session id") }
        }
        #expect(try backend.count() == 3)
    }
}
