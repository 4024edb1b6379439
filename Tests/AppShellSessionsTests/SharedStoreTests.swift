import AppShellConcurrency
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// Two registries on one Redis store, as two instances behind a load balancer: each sees what
/// the other committed, however much it holds in memory, and their writes to one session never
/// overwrite each other (a version check, and the request run again on what is stored).
@Suite struct SharedStoreTests {
    /// Two "instances": registries with a store writer each, on their own connections to one
    /// Redis store (one key prefix).
    static func instances() throws -> (SessionRegistry, SessionRegistry) {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        func instance() throws -> SessionRegistry {
            SessionRegistry(
                configuration: SessionConfiguration(),
                backend: try RedisDefaultsBackend(url: server.url, keyPrefix: prefix), groupCommitQueue: 64)
        }
        return (try instance(), try instance())
    }

    @Test func eachInstanceSeesWhatTheOtherCommitted() throws {
        let (first, second) = try Self.instances()
        defer {
            first.stopWriter()
            second.stopWriter()
        }
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

    @Test func concurrentChangesThroughBothInstancesLoseNothing() throws {
        let (first, second) = try Self.instances()
        defer {
            first.stopWriter()
            second.stopWriter()
        }
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
        defer {
            first.stopWriter()
            second.stopWriter()
        }
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
        defer {
            first.stopWriter()
            second.stopWriter()
        }
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
