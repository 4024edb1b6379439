import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The Redis URL as configured, and what the Redis store does beyond the conformance suite: key
/// layout, expiry as a Redis TTL, errors when the server is not there.
@Suite struct RedisBackendTests {
    @Test func urlsOfEveryFormParse() throws {
        #expect(try RedisURL("redis://localhost") == RedisURL(address: .tcp(host: "localhost", port: 6379)))
        #expect(
            try RedisURL("redis://10.0.0.2:6380/3")
                == RedisURL(address: .tcp(host: "10.0.0.2", port: 6380), database: 3))
        #expect(try RedisURL("redis://[::1]:7000") == RedisURL(address: .tcp(host: "::1", port: 7000)))
        #expect(
            try RedisURL("redis://:s%40cret@host/2")
                == RedisURL(address: .tcp(host: "host", port: 6379), password: "s@cret", database: 2))
        #expect(
            try RedisURL("redis://app:pw@host:1")
                == RedisURL(address: .tcp(host: "host", port: 1), username: "app", password: "pw"))
        #expect(
            try RedisURL("unix:///run/redis.sock?db=4&password=x")
                == RedisURL(address: .unix(path: "/run/redis.sock"), password: "x", database: 4))
    }

    @Test(arguments: [
        ("http://host", "not a redis://, redis-cluster:// or unix:// URL"),
        ("rediss://host", "TLS"),
        ("redis://", "no host"),
        ("redis://host:0", "port"),
        ("redis://host:99999", "port"),
        ("redis://host:x", "port"),
        ("redis://host/-1", "database"),
        ("redis://host/db", "database"),
        ("redis://user@host", "credentials"),
        ("redis://:%zz@host", "% escape"),
        ("redis://[::1", "closing ]"),
        ("unix://relative.sock", "absolute"),
        ("unix:///s.sock?timeout=1", "unknown parameter"),
    ])
    func badURLsAreRefusedSayingWhy(text: String, why: String) {
        #expect {
            _ = try RedisURL(text)
        } throws: { error in
            "\(error)".contains(why)
        }
    }

    /// Issue 31 (10): a URL that does not parse may hold its password anywhere; the errors quoted
    /// it for the forms the old redaction did not know (no `://`, a capitalised `PASSWORD=`).
    @Test(arguments: [
        "redis:/:pw@host", "unix:///s?db=2&passWORD=pw", "redis//u:pw@h", "REDIS://:pw@h:bad",
        "unix:///s?PASSWORD=pw&db=x", "redis://h/pw", "unix:///s?pw", "pw@redis://h:1", "redis://:p%zzw@h",
        "Redis://h?password=pw", "redis://u:pw@[::1",
    ])
    func anErrorAboutAURLThatDoesNotParseShowsOnlyItsScheme(text: String) throws {
        let error = try #require(throws: StoreError.self) { _ = try RedisURL(text) }
        #expect(!error.description.contains("pw"), "\(error)")
        #expect(!error.description.contains("@"), "\(error)")
        #expect(!(RedisURL.refusal(of: text) ?? "").contains("pw"))
        #expect(RedisURL.redacted(text).hasSuffix("…"))
        #expect(!RedisURL.redacted(text).contains("pw"))
    }

    @Test func theRedactionKeepsTheSchemeAlone() {
        #expect(RedisURL.redacted("redis:/:pw@host") == "redis:…")
        #expect(RedisURL.redacted("REDIS://:pw@h:bad") == "REDIS:…")
        #expect(RedisURL.redacted("redis//u:pw@h") == "…")
        #expect(RedisURL.redacted("averylongpassword:x") == "…")
        #expect(RedisURL.refusal(of: "redis://h:1/2") == nil)
        #expect(RedisURL.refusal(of: "REDIS://h") == nil)
    }

    @Test func descriptionsAndErrorsNeverShowThePassword() throws {
        let url = try RedisURL("redis://app:topsecret@host:6379/1")
        #expect(url.description == "redis://app:***@host:6379/1")
        #expect(!"\(url)".contains("topsecret"))
        #expect(try RedisURL("unix:///r.sock?password=topsecret").description == "unix:///r.sock?db=0&password=***")
        #expect {
            _ = try RedisURL("redis://app:topsecret@host:bad")
        } throws: { error in
            !"\(error)".contains("topsecret") && "\(error)".contains("redis:…")
        }
    }

    @Test func aServerThatIsNotThereIsAClearError() throws {
        let folder = NSTemporaryDirectory() + "appshell-no-redis-\(UUID().uuidString)"
        #expect {
            _ = try RedisDefaultsBackend(url: RedisURL("unix://\(folder)/none.sock"), timeoutMilliseconds: 200)
        } throws: { error in
            "\(error)".contains("connect") && "\(error)".contains(folder)
        }
    }

    @Test func aRecordIsOneHashUnderItsHashTag() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        let id = SessionID.random()
        try backend.save(
            id, SessionRecord(values: ["isLogin": .bool(true)], created: 10, accessed: 20, snapshot: [1, 2]))
        let key = backend.key(id)
        #expect(String(decoding: key, as: UTF8.self) == backend.keyPrefix + "{" + id.storeKey.text + "}")
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        let fields = try connection.command([Array("HGETALL".utf8), key])
        guard case .array(let pairs) = fields else {
            Issue.record("HGETALL answered \(fields)")
            return
        }
        var hash: [String: [UInt8]] = [:]
        for index in stride(from: 0, to: pairs.count - 1, by: 2) {
            hash[pairs[index].text ?? "?"] = pairs[index + 1].bytes
        }
        #expect(hash["c"] == Array("10".utf8))
        #expect(hash["a"] == Array("20".utf8))
        #expect(hash["s"] == [1, 2])
        #expect(hash["v"].flatMap(DefaultsValue.decode) == ["isLogin": .bool(true)])
        // No expiry configured: the key stays.
        #expect(try connection.command([Array("TTL".utf8), key]) == .integer(-1))
    }

    @Test func expiryIsTheEarlierOfIdleAndAbsoluteAsARedisDeadline() throws {
        let expiry = RedisDefaultsBackend.Expiry(idleSeconds: 1_800, absoluteSeconds: 86_400)
        let backend = try RedisTestServer.shared().backend(expiry: expiry)
        defer { backend.close() }
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        let now = Int64(Date().timeIntervalSince1970)
        func expiresAt(_ id: SessionID) throws -> Int64? {
            try connection.command([Array("EXPIRETIME".utf8), backend.key(id)]).integer
        }
        let fresh = SessionID.random()
        try backend.save(fresh, SessionRecord(values: ["k": .integer(1)], created: now, accessed: now))
        #expect(try expiresAt(fresh) == now + 1_800)
        // Near its absolute end, that comes first.
        let old = SessionID.random()
        try backend.save(old, SessionRecord(values: [:], created: now - 86_000, accessed: now))
        #expect(try expiresAt(old) == now - 86_000 + 86_400)
        // A touch moves the idle deadline, never past the absolute one.
        try backend.touch(fresh, accessed: now + 600)
        #expect(try expiresAt(fresh) == now + 600 + 1_800)
        try backend.touch(old, accessed: now + 600)
        #expect(try expiresAt(old) == now - 86_000 + 86_400)
        // A rotation keeps the deadline with the record.
        let rotated = SessionID.random()
        try backend.rename(fresh, to: rotated)
        #expect(try expiresAt(rotated) == now + 600 + 1_800)
        // A record whose deadline has passed is gone at once.
        let expired = SessionID.random()
        try backend.save(
            expired, SessionRecord(values: ["k": .integer(1)], created: now - 10_000, accessed: now - 2_000))
        #expect(try backend.load(expired) == nil)
    }

    @Test func aBatchIsOneRoundTripOfAllItsWrites() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        let first = SessionID.random()
        let second = SessionID.random()
        let rotated = SessionID.random()
        try backend.save(first, SessionRecord(values: ["n": .integer(1)], created: 1, accessed: 1))
        try backend.applyAll([
            .save(second, SessionRecord(values: ["n": .integer(2)], created: 2, accessed: 2)),
            .renameReplacing(first, to: rotated, SessionRecord(values: ["n": .integer(3)], created: 1, accessed: 3)),
            .touch(second, accessed: 5),
        ])
        #expect(try backend.load(first) == nil)
        #expect(try backend.load(rotated)?.values == ["n": .integer(3)])
        #expect(try backend.load(second)?.accessed == 5)
        #expect(try backend.count() == 2)
    }

    /// With an expiry every record carries its deadline: the sweeper's batch write walks no keys
    /// (Redis removes them); without one (the conformance suite) it deletes as the other stores do.
    @Test func theSweepIsLeftToRedisWhenRecordsExpireThemselves() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let backend = try RedisTestServer.shared().backend(
            expiry: RedisDefaultsBackend.Expiry(idleSeconds: 1_800, absoluteSeconds: 86_400))
        defer { backend.close() }
        let id = SessionID.random()
        try backend.save(id, SessionRecord(values: ["k": .integer(1)], created: now, accessed: now))
        try backend.applyAll([.removeExpired(accessedBefore: now + 1, createdBefore: 0)])
        #expect(try backend.load(id) != nil)
        // Called directly, it walks the keys and deletes.
        #expect(try backend.removeExpired(accessedBefore: now + 1, createdBefore: 0) == 1)
        #expect(try backend.load(id) == nil)
    }

    /// An action's write (its values as stored, over the version it read) sends the snapshot and
    /// access alone: the values, creation and user stay; over another version nothing is written.
    @Test func anActionsWriteChangesTheSnapshotAlone() throws {
        let backend = try RedisTestServer.shared().backend(expiry: .init(idleSeconds: 600, absoluteSeconds: 3_600))
        defer { backend.close() }
        let now = Int64(Date().timeIntervalSince1970)
        let id = SessionID.random()
        var first = SessionRecord(values: ["n": .integer(1)], created: now, accessed: now, snapshot: [1, 2])
        first.user = "ann"
        first.expectedVersion = 0
        try backend.save(id, first)
        var action = SessionRecord(values: [:], created: now, accessed: now + 5, snapshot: [3])
        action.valuesAsStored = true
        action.user = "ann"
        action.expectedVersion = 1
        try backend.save(id, action)
        let stored = try #require(try backend.load(id))
        #expect(stored.values == ["n": .integer(1)])
        #expect(stored.snapshot == [3])
        #expect(stored.user == "ann")
        #expect(stored.created == now && stored.accessed == now + 5)
        #expect(stored.version == 2)
        // Without a snapshot, the stored one goes.
        action.snapshot = nil
        action.expectedVersion = 2
        try backend.save(id, action)
        #expect(try backend.load(id)?.snapshot == nil)
        // Over a version it did not read: a conflict, nothing written.
        action.snapshot = [9]
        action.expectedVersion = 1
        #expect(throws: StoreError.self) { try backend.save(id, action) }
        #expect(try backend.load(id)?.version == 3)
        #expect(try backend.load(id)?.snapshot == nil)
    }

    /// Scripts are called by their SHA-1: a server that lost them (restarted without them, failed
    /// over, flushed by an operator) gets them again, and the write that met `NOSCRIPT` is made.
    @Test func scriptsTheServerLostAreLoadedAgain() throws {
        let server = try RedisTestServer(tcp: false, persistent: false)
        defer { server.remove() }
        let backend = try server.backend()
        defer { backend.close() }
        let (first, second) = (SessionID.random(), SessionID.random())
        try backend.save(first, SessionRecord(values: ["n": .integer(1)], created: 1, accessed: 1))
        let admin = try RedisConnection(url: server.url)
        defer { admin.close() }
        #expect(try admin.command([Array("SCRIPT".utf8), Array("FLUSH".utf8)]) == .status("OK"))
        try backend.applyAll([
            .save(second, SessionRecord(values: ["n": .integer(2)], created: 2, accessed: 2)),
            .save(first, SessionRecord(values: ["n": .integer(3)], created: 1, accessed: 3)),
        ])
        #expect(try backend.load(first)?.values == ["n": .integer(3)])
        #expect(try backend.load(second)?.values == ["n": .integer(2)])
        let loaded = try admin.command([
            Array("SCRIPT".utf8), Array("EXISTS".utf8), RedisScript.write.sha, RedisScript.touch.sha,
        ])
        #expect(loaded == .array([.integer(1), .integer(1)]))
    }

    /// The names scripts are called by: SHA-1 as Redis computes it (FIPS 180 test vectors, and a
    /// script's name as the server gave it back when loaded, checked at every connect).
    @Test func sha1MatchesItsTestVectors() {
        #expect(sha1Hex([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(sha1Hex(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            sha1Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(
            sha1Hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    /// What a session in memory is checked against before each request: the version alone, one
    /// more at every write of content, kept by a touch and a rotation, gone with the record.
    @Test func theStoredVersionFollowsEveryWrite() throws {
        let backend = try RedisTestServer.shared().backend()
        defer { backend.close() }
        let id = SessionID.random()
        #expect(try backend.storedVersion(of: id) == nil)
        try backend.save(id, SessionRecord(values: ["k": .integer(1)], created: 1, accessed: 1))
        #expect(try backend.storedVersion(of: id) == 1)
        try backend.save(id, SessionRecord(values: ["k": .integer(2)], created: 1, accessed: 2))
        #expect(try backend.storedVersion(of: id) == 2)
        #expect(try backend.load(id)?.version == 2)
        try backend.touch(id, accessed: 3)
        #expect(try backend.storedVersion(of: id) == 2)
        let rotated = SessionID.random()
        try backend.rename(id, to: rotated)
        #expect(try backend.storedVersion(of: id) == nil)
        #expect(try backend.storedVersion(of: rotated) == 2)
        try backend.remove(rotated)
        #expect(try backend.storedVersion(of: rotated) == nil)
    }
}

/// Issue 31 (4): the form-token key lives in Redis without expiry; a `maxmemory-policy` of
/// `allkeys-*` may evict it, and the next instance to start made a new one silently, refusing
/// every form the others had served.
@Suite(.serialized) struct RedisSharedSecretTests {
    @Test func anEvictedSecretIsPutBackAsTheInstancesUseIt() throws {
        let backend = try RedisTestServer.shared().backend(expiry: .init(idleSeconds: 60, absoluteSeconds: 600))
        defer { backend.close() }
        let secret = try backend.sharedSecret(named: "csrf-key") { Array(repeating: 7, count: 32) }
        let key = Array((backend.keyPrefix + "secret:csrf-key").utf8)
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        // Evicted, as allkeys-lru would.
        _ = try connection.command([Array("DEL".utf8), key])
        // The next sweep puts it back: the same key, not a new one.
        try backend.applyAll([.removeExpired(accessedBefore: 0, createdBefore: 0)])
        #expect(try connection.command([Array("GET".utf8), key]).bytes == secret)
        #expect(try backend.sharedSecret(named: "csrf-key") { Array(repeating: 8, count: 32) } == secret)
    }

    @Test func aPolicyThatMayEvictTheSecretIsWarnedOf() throws {
        let server = try RedisTestServer(tcp: false, persistent: false)
        defer { server.remove() }
        let backend = try server.backend()
        defer { backend.close() }
        #expect(backend.evictionWarning() == nil)
        let connection = try RedisConnection(url: backend.url)
        defer { connection.close() }
        for policy in ["volatile-lru", "noeviction"] {
            _ = try connection.command(["CONFIG", "SET", "maxmemory-policy", policy].map { Array($0.utf8) })
            #expect(backend.evictionWarning() == nil, "\(policy)")
        }
        _ = try connection.command(["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"].map { Array($0.utf8) })
        #expect(backend.evictionWarning()?.contains("allkeys-lru") == true)
    }
}
