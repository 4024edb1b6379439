import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// A session's lease on a Redis store (`LeaseTerms`): the instance serving a session's requests
/// in a row answers them from memory, and what another instance changes is still seen by the next
/// request, wherever it goes — the other's write waits the lease out.
@Suite struct SessionLeaseTests {
    /// Two instances on one store, as `SharedStoreTests.instances()`.
    static func instances() throws -> (SessionRegistry, SessionRegistry) { try SharedStoreTests.instances() }

    /// Reads of `id` at `registry` until it holds the lease (the store grants it at the second
    /// check asking for it); fails after 20 reads.
    static func leased(_ registry: SessionRegistry, _ id: String) throws {
        for _ in 0..<20 {
            _ = try registry.enterSession(presentedID: id) { _ = $0.defaults.integer(forKey: "count") }
            if registry.holdsLease(try #require(SessionID(id))) { return }
        }
        Issue.record("\(id) got no lease in 20 requests in a row")
    }

    /// Waits until `registry` no longer trusts its lease of `id` (at most 5 s).
    static func waitForTheLeaseToEnd(_ registry: SessionRegistry, _ id: String) throws {
        let sessionID = try #require(SessionID(id))
        let deadline = Date().addingTimeInterval(5)
        while registry.holdsLease(sessionID) && Date() < deadline { usleep(10_000) }
        #expect(!registry.holdsLease(sessionID), "the lease was trusted for more than 5 s")
    }

    @Test func requestsInARowAreAnsweredFromMemoryUnderTheLease() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id.text
        let sessionID = try #require(SessionID(id))
        // Changed behind the store's back (no instance would write so, past the lease): the
        // holder does not look, and answers what it holds until it stops trusting the lease.
        let backend = try #require(first.backend as? RedisDefaultsBackend)
        let raw = try RedisConnection(url: backend.url, timeoutMilliseconds: 2_000)
        defer { raw.close() }
        var answeredUnderTheLease = false
        // A read is under the lease when the lease is still trusted after it; a machine too slow
        // for that (a trust of 750 ms) tries again.
        for round in 1...5 where !answeredUnderTheLease {
            try Self.leased(first, id)
            let values = DefaultsValue.encode(["count": .integer(1 + round)])
            _ = try raw.command([Array("HSET".utf8), backend.key(sessionID), Array("v".utf8), values])
            _ = try raw.command([Array("HINCRBY".utf8), backend.key(sessionID), Array("n".utf8), Array("1".utf8)])
            let seen = try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result
            guard first.holdsLease(sessionID) else { continue }
            #expect(seen == 1, "answered from the store under the lease")
            answeredUnderTheLease = true
        }
        #expect(answeredUnderTheLease)
        try Self.waitForTheLeaseToEnd(first, id)
        #expect(try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result > 1)
    }

    @Test func anotherInstancesWriteWaitsTheLeaseOutAndIsSeenEverywhere() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        // The second's write meets the lease (a machine too slow to, past the first's 750 ms of
        // trust, tries again with a new session).
        let (id, contested) = try Self.contestedWrite(first, second)
        let sessionID = try #require(SessionID(id))
        // The first instance's next request sees it: its lease ended before the write was made,
        // and was not renewed (the session is contested now).
        #expect(try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 2)
        for _ in 0..<5 {
            #expect(try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 2)
        }
        if contested { #expect(!first.holdsLease(sessionID), "a contested session got its lease back") }
    }

    /// A session leased by `first`, then written through `second` (`count` 2): its id, and
    /// whether the write met the lease (the record was marked contested), tried with up to 5
    /// sessions.
    static func contestedWrite(_ first: SessionRegistry, _ second: SessionRegistry) throws -> (String, Bool) {
        let backend = try #require(first.backend as? RedisDefaultsBackend)
        let raw = try RedisConnection(url: backend.url, timeoutMilliseconds: 2_000)
        defer { raw.close() }
        var last = ""
        for _ in 1...5 {
            last = try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id.text
            try leased(first, last)
            _ = try second.enterSession(presentedID: last) { $0.defaults.set(2, forKey: "count") }
            let key = backend.key(try #require(SessionID(last)))
            if try raw.command([Array("HEXISTS".utf8), key, Array("lc".utf8)]) == .integer(1) { return (last, true) }
        }
        Issue.record("no write met the lease in 5 tries")
        return (last, false)
    }

    /// As the app shell wires it (`Shell.startRelaying`): the waiting instance asks the holder
    /// through the relay, which gives the lease up at once instead of the write waiting it out.
    @Test func theHolderGivesItsLeaseUpWhenAnotherInstanceAsks() throws {
        let (first, second) = try Self.instances()
        let backend = try #require(first.backend as? RedisDefaultsBackend)
        let channel = try #require(backend.leaseChannel)
        let relay = RedisMessageRelay(url: backend.url, keyPrefix: backend.keyPrefix)
        relay.listen(to: channel)
        relay.start { [first] heard, message in
            if heard == channel { first.releaseLease(requestedBy: message) }
        } listening: { _ in
        }
        defer {
            relay.stop()
            SharedStoreTests.stop(first, second)
        }
        #expect(eventually { relay.isListening(to: channel) })
        let (id, _) = try Self.contestedWrite(first, second)
        #expect(first.leasesReleased.load(ordering: .relaxed) == 1)
        #expect(!first.holdsLease(try #require(SessionID(id))))
        #expect(try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 2)
        // Given up in the store too (an expired lease would still name its holder).
        let raw = try RedisConnection(url: backend.url, timeoutMilliseconds: 2_000)
        defer { raw.close() }
        let key = backend.key(try #require(SessionID(id)))
        #expect(try raw.command([Array("HEXISTS".utf8), key, Array("lh".utf8)]) == .integer(0))
    }

    @Test func aWriteOfTheStoreByAnotherInstanceIsRefusedWhileTheLeaseHolds() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let context = try first.enterSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }
        let backend = try #require(second.backend as? RedisDefaultsBackend)
        var record = try #require(try backend.load(context.id))
        record.values["count"] = .integer(3)
        record.expectedVersion = record.version
        // Still trusted once the writes returned, the lease was held in the store all along (the
        // holder trusts it 250 ms less than the store keeps it): a machine too slow for that
        // tries again.
        func refused(_ write: () throws -> Void) throws -> Bool? {
            try Self.leased(first, context.id.text)
            let outcome = Result { try write() }
            guard first.holdsLease(context.id) else { return nil }
            guard case .failure(let error) = outcome else { return false }
            return (error as? StoreError)?.isConflict == true
        }
        var saveRefused: Bool?
        for _ in 1...5 where saveRefused == nil { saveRefused = try refused { try backend.save(context.id, record) } }
        #expect(saveRefused == true, "another instance's write was made under the lease")
        var removeRefused: Bool?
        for _ in 1...5 where removeRefused == nil { removeRefused = try refused { try backend.remove(context.id) } }
        #expect(removeRefused == true, "another instance's delete was made under the lease")
        #expect(try backend.load(context.id)?.values["count"] == .integer(1))
        // The holder's own writes go on.
        _ = try first.enterSession(presentedID: context.id.text) { $0.defaults.set(4, forKey: "count") }
        #expect(try backend.load(context.id)?.values["count"] == .integer(4))
    }

    /// Actions taken in turn by two instances: each finds the session changed by the other, so
    /// neither asks for the lease, and no write ever waits for one.
    @Test func actionsTakenInTurnByTwoInstancesAskForNoLease() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let context = try first.enterSession(presentedID: nil) { $0.defaults.set(0, forKey: "count") }
        for round in 1...10 {
            let instance = round.isMultiple(of: 2) ? first : second
            _ = try instance.enterSession(presentedID: context.id.text) { $0.defaults.set(round, forKey: "count") }
            #expect(!first.holdsLease(context.id) && !second.holdsLease(context.id), "round \(round)")
        }
        let backend = try #require(first.backend as? RedisDefaultsBackend)
        let raw = try RedisConnection(url: backend.url, timeoutMilliseconds: 2_000)
        defer { raw.close() }
        let asked = try raw.command([Array("HEXISTS".utf8), backend.key(context.id), Array("lr".utf8)])
        #expect(asked == .integer(0), "an instance asked for the lease")
    }

    /// The server's own work at another instance (a reminder delivered, `withLiveSession`) meets
    /// the lease as a request does: it waits it out, then writes, and the holder sees it.
    @Test func serverWorkAtAnotherInstanceWaitsTheLeaseOut() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id
        try Self.leased(first, id.text)
        #expect(try second.withLiveSession(id) { $0.defaults.set(9, forKey: "count") } != nil)
        #expect(try first.withSession(presentedID: id.text) { $0.defaults.integer(forKey: "count") }.result == 9)
    }

    @Test func loggingOutEverywhereEndsALeasedSessionBeforeItReturns() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let user = "lease-\(UUID().uuidString.prefix(8))"
        let id = try first.enterSession(presentedID: nil) {
            $0.user = user
            $0.defaults.set(1, forKey: "count")
        }.id.text
        try Self.leased(first, id)
        _ = try second.endSessions(ofUser: user, except: nil)
        // No relay here: the first instance learns it only from the store, once its lease ended —
        // which it had when `endSessions` returned.
        let after = try first.withSession(presentedID: id) { ($0.user, $0.isRetired || $0.isNew) }.result
        #expect(after.0 == nil && after.1)
    }

    @Test func aUsersStoreWrittenAtAnotherInstanceIsSeenByTheLeaseHolder() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let user = "lease-\(UUID().uuidString.prefix(8))"
        func logIn(_ registry: SessionRegistry) throws -> String {
            try registry.enterSession(presentedID: nil) {
                $0.user = user
                $0.defaults.set(1, forKey: "count")
            }.id.text
        }
        let held = try logIn(first)
        let elsewhere = try logIn(second)
        for _ in 0..<20 where !first.holdsLease(try #require(SessionID(held))) {
            _ = try first.enterSession(presentedID: held) { _ = $0.userDefaults?.integer(forKey: "habits") }
        }
        #expect(first.holdsLease(try #require(SessionID(held))))
        _ = try second.enterSession(presentedID: elsewhere) { $0.userDefaults?.set(5, forKey: "habits") }
        let seen = try first.withSession(presentedID: held) { $0.userDefaults?.integer(forKey: "habits") }.result
        #expect(seen == 5)
    }
}
