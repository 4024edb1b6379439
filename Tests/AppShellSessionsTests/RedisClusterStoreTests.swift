import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The Redis store on a Redis Cluster, beyond the conformance suites (which run on the shared
/// test cluster too): a write of several slots stopped halfway, a user's sessions spread over the
/// primaries ended at once, and a primary killed while sessions are written.
@Suite(.serialized) struct RedisClusterStoreTests {
    static func record(_ user: String?, _ step: Int) -> SessionRecord {
        var record = SessionRecord(values: ["step": .integer(step)], created: 1_000, accessed: 2_000)
        record.user = user
        return record
    }

    /// The client the backend writes through.
    static func cluster(of backend: RedisDefaultsBackend) throws -> RedisCluster {
        guard case .cluster(let cluster) = backend.writer else { throw StoreError("not a cluster backend") }
        return cluster
    }

    /// The first step of a session's write with its user's store, `claim`, made by hand on `id`
    /// (at its stored version, holding 100 ms, for `user`'s store): returns the marker.
    static func claim(_ backend: RedisDefaultsBackend, _ id: SessionID, step: Int, user: String) throws -> [UInt8] {
        let stored = try #require(try backend.load(id))
        var record = Self.record(user, step)
        record.expectedVersion = stored.version
        let reply = try Self.cluster(of: backend).command(
            RedisScript.claim.call(
                [backend.key(id)],
                [
                    backend.number(stored.version), backend.bytes("100"), backend.bytes("token-\(step)"),
                    backend.bytes(user),
                ]
                    + Array(backend.recordArguments(record).dropFirst()) + [backend.bytes(user)]),
            key: backend.key(id))
        return try #require(reply.bytes)
    }

    /// A writer stopped after its claim: no checked write passes meanwhile, and once the claim's
    /// deadline is past the next load gives the session back as it was, writable again; the
    /// user's store is as it was.
    @Test func aWriterStoppedAfterItsClaimWritesNeither() throws {
        let backend = try RedisClusterTests.shared.get().backend()
        defer { backend.close() }
        let id = SessionID.random()
        try backend.save(id, Self.record("ann", 1))
        let marker = try Self.claim(backend, id, step: 2, user: "ann")
        #expect(RedisDefaultsBackend.pending(marker)?.version == 1)

        var next = Self.record("ann", 3)
        next.expectedVersion = 1
        #expect(throws: StoreError.self) { try backend.save(id, next) }
        #expect(try backend.storedVersion(of: id) == -1)
        #expect(eventually(within: 5) { (try? backend.load(id))?.version == 1 })
        #expect(try backend.load(id)?.values == ["step": .integer(1)])
        #expect(try backend.userStore(of: "ann").version == 0)
        try backend.save(id, next)
        #expect(try backend.load(id)?.values == ["step": .integer(3)])
    }

    /// A writer stopped after its claim and the user's store's write: once the claim's deadline
    /// is past the next load finishes the session's write with the content the claim kept, so
    /// both writes hold. A store's write after the deadline is refused.
    @Test func aWriterStoppedAfterTheUsersStoreWritesBoth() throws {
        let backend = try RedisClusterTests.shared.get().backend()
        defer { backend.close() }
        let cluster = try Self.cluster(of: backend)
        let id = SessionID.random()
        try backend.save(id, Self.record("bo", 1))
        let marker = try Self.claim(backend, id, step: 2, user: "bo")
        let deadline = try #require(RedisDefaultsBackend.pending(marker)?.deadline)
        let keys = [backend.userStoreKey("bo"), backend.userSessionsKey("bo"), backend.userCommitsKey("bo")]
        func writeStore(_ token: String, over version: Int64) throws -> RedisReply {
            try cluster.command(
                RedisScript.clusterUserWrite.call(
                    keys,
                    [
                        backend.number(version), DefaultsValue.encode(["seen": .bool(true)]), backend.key(id),
                        backend.number(-1), backend.bytes(token), backend.number(deadline),
                    ]),
                key: keys[0])
        }
        #expect(try writeStore("token-2", over: 0) == .integer(1))

        #expect(eventually(within: 5) { (try? backend.load(id))?.version == 2 })
        #expect(try backend.load(id)?.values == ["step": .integer(2)])
        #expect(try backend.load(id)?.user == "bo")
        #expect(try backend.userStore(of: "bo") == UserRecord(values: ["seen": .bool(true)], version: 1))
        // At the store's version, but too late for a write on the claim's terms.
        #expect(try writeStore("token-late", over: 1) == .integer(-1))
        #expect(try backend.userStore(of: "bo").version == 1)
    }

    /// Every write leaves the version one server's store would (the registry counts on it: its
    /// next write expects it): saves, a login's rotation with the user's store, a rotation
    /// without, a rename.
    @Test(arguments: [BackendKind.redis, .redisCluster])
    func versionsFollowTheSameCountAsOnOneServer(kind: BackendKind) throws {
        try kind.withBackend { backend throws in
            let id = SessionID.random()
            try backend.save(id, Self.record(nil, 1))
            var next = Self.record(nil, 2)
            next.expectedVersion = 1
            try backend.save(id, next)
            #expect(try backend.load(id)?.version == 2)
            let loggedIn = SessionID.random()
            var login = Self.record("cy", 3)
            login.expectedVersion = 2
            login.userWrite = UserWrite(user: "cy", values: ["seen": .bool(true)], expectedVersion: 0)
            try backend.rename(id, to: loggedIn, replacingWith: login)
            #expect(try backend.load(loggedIn)?.version == 3)
            #expect(try backend.load(id) == nil)
            let rotated = SessionID.random()
            var rotation = Self.record("cy", 4)
            rotation.expectedVersion = 3
            try backend.rename(loggedIn, to: rotated, replacingWith: rotation)
            #expect(try backend.load(rotated)?.version == 4)
            let renamed = SessionID.random()
            try backend.rename(rotated, to: renamed)
            #expect(try backend.load(renamed)?.version == 4)
            #expect(try backend.load(renamed)?.user == "cy")
            #expect(try backend.removeSessions(of: "cy", except: nil) == [renamed.storeKey])
        }
    }

    /// The stream ledger on the cluster: a session's cap holds over two instances, for channels
    /// whose keys are on different primaries.
    @Test func theStreamLedgerCapsOverTwoInstancesOnTheCluster() throws {
        let cluster = try RedisClusterTests.shared.get()
        let prefix = RedisTestServer.uniquePrefix()
        let first = RedisStreamLedger(url: cluster.url, keyPrefix: prefix)
        let second = RedisStreamLedger(url: cluster.url, keyPrefix: prefix)
        first.start()
        second.start()
        defer {
            first.stop()
            second.stop()
        }
        for channel in ["a", "b", "c", "d"] {
            #expect(RedisStreamLedgerTests.admit(first, "1", of: channel, limit: 2) == true)
            #expect(RedisStreamLedgerTests.admit(second, "2", of: channel, limit: 2) == true)
            #expect(RedisStreamLedgerTests.admit(first, "3", of: channel, limit: 2) == false)
            #expect(RedisStreamLedgerTests.admit(second, "3", of: channel, limit: 2) == false)
        }
    }

    /// Log out everywhere: a user's sessions, on every primary, all removed but the one kept;
    /// another user's stay. Removing the account then takes the last one.
    @Test func aUsersSessionsOnEveryPrimaryAreEndedAtOnce() throws {
        let backend = try RedisClusterTests.shared.get().backend()
        defer { backend.close() }
        let cluster = try Self.cluster(of: backend)
        let ids = (0..<12).map { _ in SessionID.random() }
        for (index, id) in ids.enumerated() { try backend.save(id, Self.record("bob", index)) }
        let primaries = Set(ids.map { cluster.primary(ofSlot: RedisSlot.of(backend.key($0)))?.name })
        #expect(primaries.count > 1, "the sessions are spread over the primaries")
        let other = SessionID.random()
        try backend.save(other, Self.record("eve", 0))
        #expect(try backend.insertAccount(Account(name: "bob", passwordHash: "h", created: 1)))

        let removed = try backend.removeSessions(of: "bob", except: ids[0])
        #expect(removed == Set(ids.dropFirst().map(\.storeKey)))
        for id in ids.dropFirst() { #expect(try backend.load(id) == nil) }
        #expect(try backend.load(ids[0])?.user == "bob")
        #expect(try backend.load(other)?.user == "eve")

        let account = try #require(try backend.removeAccount(named: "bob"))
        #expect(account.sessions == [ids[0].storeKey])
        #expect(try backend.load(ids[0]) == nil)
        #expect(try backend.accountNames().isEmpty)
        #expect(try backend.load(other)?.user == "eve")
    }

    /// A primary killed while logged-in sessions (and their users' stores) are written: writes to
    /// its slots answer errors until its replica takes over, then succeed; every write
    /// acknowledged, and replicated (`WAIT`), before the kill is there.
    @Test func aKilledPrimaryLosesNoAcknowledgedWrite() throws {
        let testCluster = try RedisTestCluster()
        defer { testCluster.remove() }
        // Each request waits 200 ms at most for the failover (by default 1 s, which may be enough).
        let backend = try RedisDefaultsBackend(
            url: testCluster.url, keyPrefix: RedisTestServer.uniquePrefix(), retryMilliseconds: 200)
        defer { backend.close() }
        let cluster = try Self.cluster(of: backend)
        let ids = (0..<24).map { _ in SessionID.random() }
        for (index, id) in ids.enumerated() {
            var record = Self.record("user\(index % 4)", index)
            record.userWrite = UserWrite(
                user: "user\(index % 4)", values: ["last": .integer(index)], expectedVersion: Int64(index / 4))
            try backend.save(id, record)
        }
        for key in RedisClusterTests.keysOnEveryPrimary(cluster) {
            #expect(try cluster.command(["WAIT", "1", "5000"].map(RedisClusterTests.bytes), key: key) == .integer(1))
        }
        let victim = try testCluster.primaryPort(ofSlot: RedisSlot.of(backend.key(ids[0])))
        testCluster.server(victim).kill()

        var failures = 0
        let recovered = eventually(within: 30) {
            var record = Self.record("user0", 100)
            record.expectedVersion = (try? backend.storedVersion(of: ids[0])) ?? 1
            do {
                try backend.save(ids[0], record)
                return true
            } catch {
                failures += 1
                return false
            }
        }
        #expect(recovered)
        #expect(failures > 0, "the session's primary was gone a while")
        #expect(try backend.load(ids[0])?.values == ["step": .integer(100)])
        #expect(
            eventually(within: 10) {
                (try? ids.dropFirst().enumerated().allSatisfy { offset, id in
                    try backend.load(id)?.values == ["step": .integer(offset + 1)]
                }) == true
            })
        for user in 0..<4 {
            #expect(try backend.userStore(of: "user\(user)").version == 6)
        }
    }
}
