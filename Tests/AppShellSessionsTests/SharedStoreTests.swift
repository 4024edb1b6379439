import AppShellConcurrency
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// Two registries on one Redis store, as two instances behind a load balancer: each sees what
/// the other committed, however much it holds in memory, and their writes to one session never
/// overwrite each other (a version check, and the request run again on what is stored).
@Suite struct SharedStoreTests {
    /// The key the instances of a test share (the form-token key, in the app shell).
    static let sharedKey = SessionSeal.randomKey()

    /// Two "instances": registries with a store writer each, on their own connections to one
    /// Redis store (one key prefix).
    static func instances() throws -> (SessionRegistry, SessionRegistry) {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        // The key the instances share (the form-token key, in the app shell).
        let key = sharedKey
        func instance() throws -> SessionRegistry {
            SessionRegistry(
                configuration: SessionConfiguration(),
                backend: try RedisDefaultsBackend(url: server.url, keyPrefix: prefix), groupCommitQueue: 64,
                sealKey: key)
        }
        return (try instance(), try instance())
    }

    /// Stops the instances' store writers (at the end of a test of `instances()`).
    static func stop(_ instances: SessionRegistry...) {
        for instance in instances { instance.stopWriter() }
    }

    /// Issue 31 (4): a cookieless request wrote its new session to a shared store (for another
    /// instance to find its splash under way), so a flood of them filled Redis. Now a session that
    /// holds nothing is written nowhere: its cookie carries what another instance needs, sealed.
    @Test func cookielessRequestsStoreNothingAndTheOtherInstanceTakesTheSessionUp() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        var cookies: [String] = []
        for _ in 0..<500 {
            // As the app shell does: the splash's start noted in the memo, nothing else kept.
            let context = try first.enterSession(presentedID: nil) { $0.memo = 1_234 }
            #expect(context.needsCookie)
            cookies.append(context.cookieValue)
        }
        #expect(try first.backend.count() == 0, "a cookieless request stored its session")
        #expect(first.count == 0, "a cookieless request left its session in memory")
        // The next request reaches the other instance: the same session, its memo kept, no new
        // cookie — and still nothing stored, as it still holds nothing.
        let cookie = cookies[0]
        let again = try second.withSession(presentedID: cookie) { ($0.isNew, $0.memo) }
        #expect(again.result == (false, 1_234))
        #expect(!again.context.needsCookie)
        #expect(again.context.id.text == String(cookie.prefix(SessionID.textLength)))
        #expect(try second.backend.count() == 0)
        // Once it holds something it is stored, and the first instance sees it under the same id.
        _ = try second.enterSession(presentedID: cookie) { $0.defaults.set(1, forKey: "count") }
        #expect(try second.backend.count() == 1)
        let seen = try first.withSession(presentedID: cookie) { ($0.isNew, $0.defaults.integer(forKey: "count")) }
        #expect(seen.result == (false, 1))
        #expect(seen.context.id == again.context.id)
    }

    @Test func aSealThatIsNotTheInstancesIsANewSession() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let cookie = try first.enterSession(presentedID: nil) { $0.memo = 1_234 }.cookieValue
        let id = String(cookie.prefix(SessionID.textLength))
        let seal = cookie.dropFirst(SessionID.textLength + 1)
        let mac = try #require(seal.split(separator: ".").last, "the cookie has no seal")
        let other = SessionID.random().text
        let forged = [
            id,  // no seal: an id that names nothing
            id + "." + seal.replacingOccurrences(of: ".1234.", with: ".1235."),  // another memo
            other + "." + seal,  // another id under this seal
            id + ".1.1234." + mac,  // another creation time
        ]
        for text in forged {
            let context = try second.enterSession(presentedID: text) { _ in }
            #expect(context.isNew, "\(text) was taken up")
            #expect(context.id.text != id)
        }
        // Under another key (an instance of another store) it is not one either.
        let stranger = SessionRegistry(
            configuration: SessionConfiguration(), backend: first.backend, groupCommitQueue: 8)
        defer { stranger.stopWriter() }
        #expect(try stranger.enterSession(presentedID: cookie) { _ in }.isNew)
    }

    @Test func eachInstanceSeesWhatTheOtherCommitted() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id.text
        #expect(try second.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 1)
        // Both hold it in memory now; each change shows on the other.
        _ = try first.withSession(presentedID: id) { $0.defaults.set(2, forKey: "count") }
        #expect(try second.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 2)
        _ = try second.withSession(presentedID: id) { $0.defaults.set("ann", forKey: "user") }
        let seen = try first.withSession(presentedID: id) {
            ($0.defaults.integer(forKey: "count"), $0.defaults.string(forKey: "user"))
        }.result
        #expect(seen.0 == 2 && seen.1 == "ann")
    }

    /// The loader checks the sessions queued meanwhile together, their stored versions read in one
    /// round trip: each still sees what the other instance changed or removed, and an id the store
    /// does not know names nothing.
    @Test func theLoadersBatchSeesEachChangeOfTheOtherInstance() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let ids = try (0..<3).map { _ in
            try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id
        }
        for id in ids {
            #expect(try second.withSession(presentedID: id.text) { $0.defaults.integer(forKey: "count") }.result == 1)
        }
        let read = try second.backend.storedVersions(of: ids + [SessionID.random()], userStoresOf: ["nobody"])
        #expect(read.sessions == [1, 1, 1, nil])
        #expect(read.userStores == [0])
        _ = try first.withSession(presentedID: ids[0].text) { $0.defaults.set(2, forKey: "count") }
        try first.backend.remove(ids[1])
        let unknown = SessionID.random()
        let outcomes = second.acquireAll([ids[0], ids[1], ids[2], unknown], now: second.clock()).map {
            step -> Result<SessionRegistry.Acquired, any Error> in
            guard case .loaded(let outcome) = step else { return .failure(StoreError("put off: \(step)")) }
            return outcome
        }
        func count(_ outcome: Result<SessionRegistry.Acquired, any Error>) -> DefaultsValue? {
            guard case .success(.found(let session)) = outcome else { return nil }
            defer { session.users.subtract(1, ordering: .relaxed) }
            return session.state.withLock { $0.values["count"] }
        }
        #expect(count(outcomes[0]) == .integer(2))
        #expect({ if case .success(.retired) = outcomes[1] { true } else { false } }(), "\(outcomes[1])")
        #expect(count(outcomes[2]) == .integer(1))
        #expect({ if case .success(.none) = outcomes[3] { true } else { false } }(), "\(outcomes[3])")
    }

    /// A logged-in session's read: its version and its user's store's are checked in one round
    /// trip, and the store kept in memory at that version is read without another; once the other
    /// instance changed it, it is read again.
    @Test func aUsersStoreIsReadAgainOnlyWhenItChanged() throws {
        let server = try RedisTestServer(tcp: false, persistent: false)
        defer { server.remove() }
        func instance() throws -> SessionRegistry {
            SessionRegistry(
                configuration: SessionConfiguration(), backend: try RedisDefaultsBackend(url: server.url),
                groupCommitQueue: 64, sealKey: Self.sharedKey)
        }
        let (first, second) = (try instance(), try instance())
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { context in
            context.user = "ann"
            context.userDefaults?.set(1, forKey: "n")
        }.context.id.text
        let admin = try RedisConnection(url: server.url)
        defer { admin.close() }
        func calls(_ command: String) throws -> Int {
            let text = try admin.command([Array("INFO".utf8), Array("commandstats".utf8)]).text ?? ""
            let line = text.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_\(command):") } ?? ""
            return Int(line.split(separator: "=")[safe: 1]?.split(separator: ",").first ?? "0") ?? 0
        }
        func read() throws -> Int? {
            try first.withSession(presentedID: id) { $0.userDefaults?.integer(forKey: "n") }.result
        }
        #expect(try read() == 1)
        _ = try admin.command([Array("CONFIG".utf8), Array("RESETSTAT".utf8)])
        for _ in 0..<5 { #expect(try read() == 1) }
        // Checks of the version (HGET of the session's and the store's), then the lease asked for
        // (a script reading both with HMGET), granted at the second ask: then none.
        let (checks, leases, loads) = (
            try calls("hget"), try calls("evalsha"), try calls("hmget") - 2 * calls("evalsha")
        )
        #expect(loads == 0, "the session or the user's store was loaded again")
        #expect(checks.isMultiple(of: 2) && checks / 2 + leases <= 5 && leases >= 1, "\(checks) \(leases)")
        #expect(first.holdsLease(try #require(SessionID(id))))
        _ = try second.withSession(presentedID: id) { $0.userDefaults?.set(2, forKey: "n") }
        #expect(try read() == 2)
    }

    @Test func concurrentChangesThroughBothInstancesLoseNothing() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(0, forKey: "count") }.context.id.text
        let perThread = 40
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for registry in [first, second, first, second] {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<perThread {
                    do {
                        _ = try registry.withSession(presentedID: id) { session in
                            session.defaults.set(session.defaults.integer(forKey: "count") + 1, forKey: "count")
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        group.wait()
        let refused = failures.withLock { $0 }
        // A request that met more conflicts than it may retry is refused, with nothing changed.
        for failure in refused { #expect(failure.contains("changed at the same moment"), "\(failure)") }
        let count = try first.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result
        #expect(count == 4 * perThread - refused.count, "\(refused.count) refused")
        #expect(refused.count < perThread, "most increments must get through")
    }

    @Test func aRotationThroughOneInstanceRetiresTheIDOnTheOther() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let old = try first.withSession(presentedID: nil) { $0.defaults.set(true, forKey: "isLogin") }.context.id.text
        #expect(try second.withSession(presentedID: old) { $0.defaults.bool(forKey: "isLogin") }.result)
        let rotated = try first.withSession(presentedID: old) { session in
            session.rotateID()
            session.defaults.set(false, forKey: "isLogin")
        }.context.id.text
        #expect(rotated != old)
        // The other instance, which held the old id, no longer lets it in.
        let presented = try second.withSession(presentedID: old) { $0.defaults.bool(forKey: "isLogin") }
        #expect(presented.result == false)
        #expect(presented.context.isRetired, "the old id is answered as retired, as after a rotation here")
        // The new id works on both.
        #expect(
            try second.withSession(presentedID: rotated) { $0.defaults.bool(forKey: "isLogin") }.context.id.text
                == rotated)
    }

    /// The server's own work on a session (a timer: `withLiveSession`) whose commit meets a change
    /// made meanwhile through the other instance runs again on what is stored, as a request does:
    /// neither change is lost, and the work is not refused.
    @Test func serverWorkThatMeetsAChangeFromTheOtherInstanceRunsAgain() throws {
        let (first, second) = try Self.instances()
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(0, forKey: "count") }.context.id
        var runs = 0
        let seen = try first.withLiveSession(id) { session -> Int in
            runs += 1
            if runs == 1 {
                // Between this instance's read and its commit, the other one commits a change.
                _ = try second.withSession(presentedID: id.text) { $0.defaults.set("ann", forKey: "user") }
            }
            let count = session.defaults.integer(forKey: "count") + 1
            session.defaults.set(count, forKey: "count")
            return count
        }
        #expect(runs == 2, "run again after the conflict")
        // Counted for /metrics (appshell_store_conflicts_total), and not as a commit.
        let counted = try #require(first.writer).statistics.snapshot
        #expect(counted.conflicts == 1)
        #expect(seen == 1)
        let stored = try second.withSession(presentedID: id.text) {
            ($0.defaults.integer(forKey: "count"), $0.defaults.string(forKey: "user"))
        }.result
        #expect(stored.0 == 1 && stored.1 == "ann", "both changes kept: \(stored)")
    }
}

extension Collection {
    /// The element at `index`, or `nil` past the end.
    fileprivate subscript(safe index: Index) -> Element? { indices.contains(index) ? self[index] : nil }
}
