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

    /// A writer stopped after its claim (`RedisScript.claim`, the first step of a session's write
    /// with its user's store): no checked write passes meanwhile, and once the claim's deadline
    /// passed the next load gives the session back as it was, writable again.
    @Test func aClaimLeftByAStoppedWriterIsUndoneAfterItsDeadline() throws {
        let backend = try RedisClusterTests.shared.get().backend()
        defer { backend.close() }
        let id = SessionID.random()
        try backend.save(id, Self.record("ann", 1))
        let stored = try #require(try backend.load(id))
        let deadline = Int64(Date().timeIntervalSince1970 * 1000) + 300
        let claimed = try Self.cluster(of: backend).command(
            RedisScript.claim.call(
                [backend.key(id)], [backend.number(stored.version), backend.number(deadline), backend.bytes("t")]),
            key: backend.key(id))
        #expect(claimed == .integer(stored.version))

        var next = Self.record("ann", 2)
        next.expectedVersion = stored.version
        #expect(throws: StoreError.self) { try backend.save(id, next) }
        #expect(try backend.storedVersion(of: id) == -1)
        #expect(
            RedisClusterTests.eventually(seconds: 5) {
                (try? backend.load(id))?.version == stored.version
            })
        #expect(try backend.load(id)?.values == ["step": .integer(1)])
        try backend.save(id, next)
        #expect(try backend.load(id)?.values == ["step": .integer(2)])
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
        let recovered = RedisClusterTests.eventually(seconds: 30) {
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
            RedisClusterTests.eventually(seconds: 10) {
                (try? ids.dropFirst().enumerated().allSatisfy { offset, id in
                    try backend.load(id)?.values == ["step": .integer(offset + 1)]
                }) == true
            })
        for user in 0..<4 {
            #expect(try backend.userStore(of: "user\(user)").version == 6)
        }
    }
}
