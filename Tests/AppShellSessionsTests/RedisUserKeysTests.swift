import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// What only the Redis store does for users: a set of each user's sessions, which expires with
/// them (Redis removes expired sessions by itself, telling no one).
@Suite struct RedisUserKeysTests {
    /// A logged-in session's user's set lives as long as the session can (its absolute deadline,
    /// set when it enters the set, so that the writes and touches that follow need not touch the
    /// set), so that a session is never left out of it while it lives; and it goes once the
    /// sessions went.
    @Test func aUsersSetOfSessionsLivesAsLongAsItsSessions() throws {
        let expiry = RedisDefaultsBackend.Expiry(idleSeconds: 600, absoluteSeconds: 3_600)
        let backend = try RedisTestServer.shared().backend(expiry: expiry)
        defer { backend.close() }
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        func expiresAt(_ key: [UInt8]) throws -> Int64? {
            try connection.command([Array("EXPIRETIME".utf8), key]).integer
        }
        let now = Int64(Date().timeIntervalSince1970)
        let (first, second) = (SessionID.random(), SessionID.random())
        var record = SessionRecord(values: [:], created: now, accessed: now)
        record.user = "ann"
        try backend.save(first, record)
        let set = backend.userSessionsKey("ann")
        #expect(try expiresAt(backend.key(first)) == now + 600)
        #expect(try expiresAt(set) == now + 3_600)
        record.created = now + 100
        record.accessed = now + 100
        try backend.save(second, record)
        #expect(try expiresAt(set) == now + 3_700)
        try backend.touch(first, accessed: now + 300)
        #expect(try expiresAt(backend.key(first)) == now + 900)
        #expect(try expiresAt(set) == now + 3_700)
        // An earlier deadline does not shorten it.
        var earlier = SessionRecord(values: [:], created: now, accessed: now + 300)
        earlier.user = "ann"
        try backend.save(first, earlier)
        #expect(try expiresAt(set) == now + 3_700)
        let members = try connection.command([Array("SMEMBERS".utf8), set])
        guard case .array(let keys) = members else {
            Issue.record("SMEMBERS answered \(members)")
            return
        }
        #expect(Set(keys.compactMap(\.bytes)) == [backend.key(first), backend.key(second)])
        // Removed, expired or renamed, a session leaves the set (or moves in it).
        let renamed = SessionID.random()
        try backend.rename(first, to: renamed)
        try backend.remove(second)
        let after = try connection.command([Array("SMEMBERS".utf8), set])
        #expect(after == .array([.bytes(backend.key(renamed))]))
        #expect(try backend.removeExpired(accessedBefore: now + 1_000, createdBefore: 0) == 1)
        #expect(try connection.command([Array("EXISTS".utf8), set]) == .integer(0))
    }

    /// A logged-out session's record keeps its key in the user's set until the set is next
    /// entered (a login): then every member no longer logged in as the user leaves it. A save of
    /// a session that stays logged in leaves the set as it is.
    @Test func aLoginTidiesTheUsersSet() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        func members() throws -> Set<[UInt8]> {
            let reply = try connection.command([Array("SMEMBERS".utf8), backend.userSessionsKey("ann")])
            guard case .array(let keys) = reply else { return [] }
            return Set(keys.compactMap(\.bytes))
        }
        var loggedIn = SessionRecord(values: [:], created: 1, accessed: 1)
        loggedIn.user = "ann"
        let loggedOut = SessionRecord(values: [:], created: 1, accessed: 1)
        let ids = (0..<4).map { _ in SessionID.random() }
        for id in ids.prefix(3) { try backend.save(id, loggedIn) }
        for id in ids.prefix(2) { try backend.save(id, loggedOut) }
        #expect(try members() == Set(ids.prefix(3).map(backend.key)))
        try backend.save(ids[2], loggedIn)
        #expect(try members() == Set(ids.prefix(3).map(backend.key)))
        try backend.save(ids[3], loggedIn)
        #expect(try members() == [backend.key(ids[2]), backend.key(ids[3])])
        #expect(try backend.removeSessions(of: "ann", except: nil) == [ids[2].storeKey, ids[3].storeKey])
    }

    /// The users' keys are not sessions' keys: counting and sweeping sessions never see them.
    @Test func usersKeysAreNotCountedAsSessions() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        #expect(try backend.insertAccount(Account(name: "ann", passwordHash: "h", created: 1)))
        _ = try backend.writeUserStore(UserWrite(user: "ann", values: ["k": .integer(1)], expectedVersion: 0))
        var record = SessionRecord(values: [:], created: 1, accessed: 1)
        record.user = "ann"
        try backend.save(SessionID.random(), record)
        #expect(try backend.count() == 1)
        #expect(try backend.removeExpired(accessedBefore: 2, createdBefore: 0) == 1)
        #expect(try backend.count() == 0)
        #expect(try backend.userStore(of: "ann").version == 1)
        #expect(try backend.accountNames() == ["ann"])
    }
}
