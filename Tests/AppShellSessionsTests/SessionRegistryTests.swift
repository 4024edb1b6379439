import AppShellConcurrency
import AppShellSessions
import Synchronization
import Testing

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let now = Atomic<Int64>(1_800_000_000)
    var reading: @Sendable () -> Int64 { { self.now.load(ordering: .relaxed) } }
    func advance(_ seconds: Int64) { now.add(seconds, ordering: .relaxed) }
}

/// A memory backend whose writes can be made to fail, to check that nothing changes then.
final class FaultyBackend: DefaultsBackend {
    let inner = MemoryDefaultsBackend()
    let failing = Atomic<Bool>(false)
    private func check() throws(StoreError) {
        if failing.load(ordering: .relaxed) { throw StoreError("disk on fire") }
    }
    func load(_ id: SessionID) throws(StoreError) -> SessionRecord? { inner.load(id) }
    func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) {
        try check()
        try inner.save(id, record)
    }
    func touch(_ id: SessionID, accessed: Int64) throws(StoreError) { inner.touch(id, accessed: accessed) }
    func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) {
        try check()
        inner.rename(id, to: newID)
    }
    func remove(_ id: SessionID) throws(StoreError) { inner.remove(id) }
    func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        inner.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
    }
    func count() throws(StoreError) -> Int { inner.count() }
}

/// A memory backend that records the store writer's batches and counts deletes made outside
/// them.
final class WriteRecordingBackend: DefaultsBackend {
    let inner = MemoryDefaultsBackend()
    let batches = Locked<[[StoreWrite]]>([])
    let directRemoves = Locked(0)
    func load(_ id: SessionID) throws(StoreError) -> SessionRecord? { inner.load(id) }
    func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) { try inner.save(id, record) }
    func touch(_ id: SessionID, accessed: Int64) throws(StoreError) { inner.touch(id, accessed: accessed) }
    func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) { inner.rename(id, to: newID) }
    func remove(_ id: SessionID) throws(StoreError) {
        directRemoves.withLock { $0 += 1 }
        inner.remove(id)
    }
    func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        directRemoves.withLock { $0 += 1 }
        return inner.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
    }
    func count() throws(StoreError) -> Int { inner.count() }
    func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        batches.withLock { $0.append(writes) }
        for write in writes {
            switch write {
            case .remove(let id): inner.remove(id)
            case .removeExpired(let accessed, let created):
                _ = inner.removeExpired(accessedBefore: accessed, createdBefore: created)
            default: try inner.apply(write)
            }
        }
    }
}

@Suite struct SessionRegistryTests {
    static func make(
        _ configure: (inout SessionConfiguration) -> Void = { _ in }
    ) -> (SessionRegistry, MemoryDefaultsBackend, TestClock) {
        var configuration = SessionConfiguration()
        configure(&configuration)
        let backend = MemoryDefaultsBackend()
        let clock = TestClock()
        return (SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading), backend, clock)
    }

    /// Sets `key` in the session `cookie` names; returns the cookie to use next.
    @discardableResult
    static func set(_ registry: SessionRegistry, _ cookie: String?, _ key: String, _ value: Int) throws -> String {
        try registry.withSession(presentedID: cookie) { $0.defaults.set(value, forKey: key) }.context.id.text
    }

    static func read(_ registry: SessionRegistry, _ cookie: String?, _ key: String) throws -> (Int, isNew: Bool) {
        let outcome = try registry.withSession(presentedID: cookie) { $0.defaults.integer(forKey: key) }
        return (outcome.result, outcome.context.isNew)
    }

    @Test func aRequestWithoutCookieGetsANewSessionAndNoWrite() throws {
        let (registry, backend, _) = Self.make()
        let outcome = try registry.withSession(presentedID: nil) { $0.defaults.bool(forKey: "isLogin") }
        #expect(outcome.context.isNew)
        #expect(outcome.context.needsCookie)
        #expect(registry.count == 1)
        #expect(backend.count() == 0)
        let again = try registry.withSession(presentedID: outcome.context.id.text) { _ in }
        #expect(again.context.isNew == false)
        #expect(again.context.needsCookie == false)
        #expect(backend.count() == 0)
    }

    @Test func valuesAreStoredOnceSetAndFoundAgain() throws {
        let (registry, backend, _) = Self.make()
        let cookie = try Self.set(registry, nil, "count", 1)
        #expect(backend.count() == 1)
        #expect(try Self.read(registry, cookie, "count") == (1, false))
        let id = try #require(SessionID(cookie))
        let record = try #require(backend.load(id))
        #expect(record.values == ["count": .integer(1)])
    }

    @Test(arguments: ["", "garbage", String(repeating: "A", count: 43), SessionID.random().text])
    func unknownOrMalformedIDsAreNeverAdopted(cookie: String) throws {
        let (registry, _, _) = Self.make()
        let outcome = try registry.withSession(presentedID: cookie) { _ in }
        #expect(outcome.context.isNew)
        #expect(outcome.context.id.text != cookie)
    }

    @Test func idleSessionsExpire() throws {
        let (registry, backend, clock) = Self.make { $0.idleTimeoutSeconds = 100 }
        let cookie = try Self.set(registry, nil, "count", 5)
        clock.advance(100)
        #expect(try Self.read(registry, cookie, "count") == (5, false))
        clock.advance(101)
        let (value, isNew) = try Self.read(registry, cookie, "count")
        #expect(value == 0)
        #expect(isNew)
        #expect(try backend.load(#require(SessionID(cookie))) == nil)
    }

    @Test func sessionsExpireAfterTheAbsoluteTimeoutHoweverUsed() throws {
        let (registry, _, clock) = Self.make {
            $0.idleTimeoutSeconds = 100
            $0.absoluteTimeoutSeconds = 250
        }
        let cookie = try Self.set(registry, nil, "count", 5)
        for _ in 0..<2 {
            clock.advance(90)
            #expect(try Self.read(registry, cookie, "count") == (5, false))
        }
        clock.advance(90)
        #expect(try Self.read(registry, cookie, "count").isNew)
    }

    @Test func expiredStoredSessionsDoNotComeBackAfterARestart() throws {
        let (registry, backend, clock) = Self.make { $0.idleTimeoutSeconds = 100 }
        let cookie = try Self.set(registry, nil, "count", 5)
        let restarted = SessionRegistry(configuration: registry.configuration, backend: backend, clock: clock.reading)
        #expect(try Self.read(restarted, cookie, "count") == (5, false))
        clock.advance(500)
        let fresh = SessionRegistry(configuration: registry.configuration, backend: backend, clock: clock.reading)
        #expect(try Self.read(fresh, cookie, "count").isNew)
    }

    /// A registry with a store writer over a recording backend, sessions idle for 100 s expiring.
    static func makeWithWriter() -> (SessionRegistry, WriteRecordingBackend, TestClock) {
        let backend = WriteRecordingBackend()
        let clock = TestClock()
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100
        let registry = SessionRegistry(
            configuration: configuration, backend: backend, groupCommitQueue: 16, clock: clock.reading)
        return (registry, backend, clock)
    }

    /// With a store writer, the record of a session found expired is deleted through it, not by
    /// the request's thread: a server thread neither waits for a commit nor takes the writer's
    /// connection while a batch holds it.
    @Test func anExpiredStoredSessionIsDeletedThroughTheWriter() throws {
        let (first, backend, clock) = Self.makeWithWriter()
        let cookie = try Self.set(first, nil, "count", 5)
        first.stopWriter()
        let id = try #require(SessionID(cookie))
        #expect(backend.inner.load(id) != nil)
        clock.advance(500)
        let restarted = SessionRegistry(
            configuration: first.configuration, backend: backend, groupCommitQueue: 16, clock: clock.reading)
        #expect(try Self.read(restarted, cookie, "count").isNew)
        restarted.stopWriter()
        #expect(backend.inner.load(id) == nil)
        #expect(backend.batches.withLock { $0 }.contains([.remove(id)]))
        #expect(backend.directRemoves.withLock { $0 } == 0)
    }

    /// With a store writer, the sweeper's delete of expired records goes through it too: the
    /// sweep runs on the timer thread, which must not wait out a batch being committed.
    @Test func theSweepDeletesThroughTheWriter() throws {
        let (registry, backend, clock) = Self.makeWithWriter()
        let old = try #require(SessionID(try Self.set(registry, nil, "count", 1)))
        clock.advance(1_000)
        let recent = try #require(SessionID(try Self.set(registry, nil, "count", 2)))
        #expect(try registry.sweep() == 1)
        registry.stopWriter()
        #expect(backend.inner.load(old) == nil)
        #expect(backend.inner.load(recent) != nil)
        #expect(
            backend.batches.withLock { $0 }.joined().contains { write in
                if case .removeExpired = write { return true } else { return false }
            })
        #expect(backend.directRemoves.withLock { $0 } == 0)
    }

    @Test func rotationKeepsValuesAndKillsTheOldID() throws {
        let (registry, backend, clock) = Self.make()
        let old = try Self.set(registry, nil, "count", 7)
        let rotated = try registry.withSession(presentedID: old) { session in session.rotateID() }
        #expect(rotated.context.needsCookie)
        let new = rotated.context.id.text
        #expect(new != old)
        #expect(try Self.read(registry, new, "count") == (7, false))
        // Moments after the rotation the old id is retired (no session, no cookie), then unknown.
        let retired = try registry.withSession(presentedID: old) { $0.defaults.integer(forKey: "count") }
        #expect(retired.result == 0)
        #expect(retired.context.isRetired)
        #expect(!retired.context.needsCookie)
        clock.advance(SessionRegistry.retiredIDGraceSeconds + 1)
        #expect(try Self.read(registry, old, "count") == (0, true))
        #expect(try backend.load(#require(SessionID(old))) == nil)
        #expect(try backend.load(#require(SessionID(new)))?.values == ["count": .integer(7)])
        // A restart sees the same: the old id names nothing in the store either.
        let restarted = SessionRegistry(configuration: registry.configuration, backend: backend)
        #expect(try Self.read(restarted, old, "count").isNew)
        #expect(try Self.read(restarted, new, "count") == (7, false))
    }

    @Test func aThrowingHandlerChangesNothing() throws {
        struct Refused: Error {}
        let (registry, backend, _) = Self.make()
        let cookie = try Self.set(registry, nil, "count", 1)
        #expect(throws: Refused.self) {
            try registry.withSession(presentedID: cookie) { session in
                session.defaults.set(2, forKey: "count")
                session.rotateID()
                throw Refused()
            }
        }
        #expect(try Self.read(registry, cookie, "count") == (1, false))
        #expect(try backend.load(#require(SessionID(cookie)))?.values == ["count": .integer(1)])
    }

    @Test func aFailedWriteChangesNothing() throws {
        let backend = FaultyBackend()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
        let cookie = try Self.set(registry, nil, "count", 1)
        backend.failing.store(true, ordering: .relaxed)
        #expect(throws: StoreError.self) { try Self.set(registry, cookie, "count", 2) }
        #expect(throws: StoreError.self) { try registry.withSession(presentedID: cookie) { $0.rotateID() } }
        backend.failing.store(false, ordering: .relaxed)
        #expect(try Self.read(registry, cookie, "count") == (1, false))
    }

    @Test func theMemoryCapDropsTheLeastRecentlyUsed() throws {
        let (registry, backend, clock) = Self.make { $0.maxSessionsInMemory = 100 }
        let kept = try Self.set(registry, nil, "count", 42)
        var empty: [String] = []
        for _ in 0..<1000 {
            clock.advance(1)
            empty.append(try registry.withSession(presentedID: nil) { _ in }.context.id.text)
        }
        #expect(registry.count <= 100)
        #expect(registry.count > 50)
        // The stored session was dropped from memory and loads again; an empty one is gone.
        #expect(try Self.read(registry, kept, "count") == (42, false))
        #expect(try Self.read(registry, empty[0], "count").isNew)
        // The most recent ones are still in memory.
        #expect(try Self.read(registry, empty[999], "count").isNew == false)
        #expect(backend.count() == 1)
    }

    @Test(arguments: [0, 1, 10] as [Int64])
    func theMemoryCapKeepsTheNewestWhateverTheSpreadOfAccessTimes(step: Int64) throws {
        // 0: all in one second; 1: one per second; 10: spread over hours (the sorting path).
        let (registry, _, clock) = Self.make {
            $0.maxSessionsInMemory = 100
            $0.idleTimeoutSeconds = 1_000_000
            $0.absoluteTimeoutSeconds = 1_000_000
        }
        var ids: [String] = []
        for _ in 0..<1000 {
            clock.advance(step)
            ids.append(try registry.withSession(presentedID: nil) { _ in }.context.id.text)
        }
        #expect(registry.count <= 100)
        #expect(registry.count >= 100 - 100 / 8 - 1)
        // The newest session is never the one evicted (it is in use while it is inserted).
        #expect(try Self.read(registry, ids[999], "count").isNew == false)
        if step > 0 {
            #expect(try Self.read(registry, ids[0], "count").isNew)
            #expect(try Self.read(registry, ids[998], "count").isNew == false)
        }
    }

    @Test func aSessionUsedSinceItCameInOutlivesNewerIdleOnes() throws {
        let (registry, _, clock) = Self.make { $0.maxSessionsInMemory = 100 }
        let first = try registry.withSession(presentedID: nil) { _ in }.context.id.text
        var others: [String] = []
        for _ in 0..<99 {
            clock.advance(1)
            others.append(try registry.withSession(presentedID: nil) { _ in }.context.id.text)
        }
        _ = try registry.withSession(presentedID: first) { _ in }  // used again: not the least recent
        for _ in 0..<10 {
            clock.advance(1)
            _ = try registry.withSession(presentedID: nil) { _ in }
        }
        #expect(registry.count == 100)
        #expect(try Self.read(registry, first, "count").isNew == false)
        #expect(try Self.read(registry, others[0], "count").isNew)
    }

    @Test func theSweeperRemovesExpiredSessions() throws {
        let (registry, backend, clock) = Self.make { $0.idleTimeoutSeconds = 100 }
        let stored = try Self.set(registry, nil, "count", 1)
        _ = try registry.withSession(presentedID: nil) { _ in }
        #expect(registry.count == 2)
        clock.advance(50)
        #expect(try registry.sweep() == 0)
        clock.advance(60)
        #expect(try registry.sweep() == 2)
        #expect(registry.count == 0)
        // The row is kept one touch interval (25 s) longer: its `accessed` may lag the last use by that.
        #expect(backend.count() == 1)
        clock.advance(25)
        try registry.sweep()
        #expect(backend.count() == 0)
        #expect(try Self.read(registry, stored, "count").isNew)
    }

    @Test func readsRefreshTheStoredAccessTimeOnlyNowAndThen() throws {
        let (registry, backend, clock) = Self.make { $0.idleTimeoutSeconds = 1800 }
        let cookie = try Self.set(registry, nil, "count", 1)
        let id = try #require(SessionID(cookie))
        let written = try #require(backend.load(id)).accessed
        clock.advance(10)
        _ = try Self.read(registry, cookie, "count")
        #expect(backend.load(id)?.accessed == written)
        clock.advance(60)
        _ = try Self.read(registry, cookie, "count")
        #expect(backend.load(id)?.accessed == written + 70)
    }

    @Test func registeredDefaultsAreSharedFallbacks() throws {
        let (registry, backend, _) = Self.make()
        registry.register(defaults: ["viewType": .integer(0), "theme": .string("light")])
        let outcome = try registry.withSession(presentedID: nil) { $0.defaults.string(forKey: "theme") }
        #expect(outcome.result == "light")
        #expect(backend.count() == 0)
    }
}
