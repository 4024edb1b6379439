import AppShellConcurrency
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// Expiry with instances sharing a store: what one instance remembers of a session's last use is
/// not the session's last use.
@Suite struct SharedStoreExpiryTests {
    /// An instance that last saw a session long ago finds it expired in its memory; the record
    /// says whether it is: used meanwhile through the other instance, it goes on (before, the
    /// stale instance deleted it, logging the user out).
    @Test func aSessionExpiredInOneInstancesMemoryIsAliveIfUsedThroughTheOther() throws {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100
        let start: Int64 = 1_800_000_000
        func instance(_ time: Locked<Int64>) throws -> SessionRegistry {
            SessionRegistry(
                configuration: configuration, backend: try RedisDefaultsBackend(url: server.url, keyPrefix: prefix),
                groupCommitQueue: 64, sealKey: SharedStoreTests.sharedKey, clock: { time.withLock { $0 } })
        }
        let (firstTime, secondTime) = (Locked(start), Locked(start))
        let (first, second) = (try instance(firstTime), try instance(secondTime))
        defer { SharedStoreTests.stop(first, second) }
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "count") }.context.id.text
        #expect(try second.withSession(presentedID: id) { $0.defaults.integer(forKey: "count") }.result == 1)
        // Used through the first at 90 s (its access stored), then through the second at 150 s.
        firstTime.withLock { $0 = start + 90 }
        _ = try first.enterSession(presentedID: id) { _ = $0.defaults.integer(forKey: "count") }
        // A read's access is written after its answer (queued for the store writer).
        let sessionID = try #require(SessionID(id))
        let deadline = Date().addingTimeInterval(10)
        while try first.backend.load(sessionID)?.accessed != start + 90 && Date() < deadline { usleep(2_000) }
        #expect(try first.backend.load(sessionID)?.accessed == start + 90)
        secondTime.withLock { $0 = start + 150 }
        let seen = try second.withSession(presentedID: id) { ($0.isNew, $0.defaults.integer(forKey: "count")) }
        #expect(seen.result == (false, 1), "the session ended at the instance that last saw it 150 s ago")
        #expect(try second.backend.load(sessionID) != nil)
    }
}
