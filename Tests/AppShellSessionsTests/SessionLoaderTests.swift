import AppShellConcurrency
import Dispatch
import Foundation
import Testing

@testable import AppShellSessions

/// A memory backend whose loads can be held, recording the thread each ran on.
final class HeldLoadBackend: DefaultsBackend {
    let inner = MemoryDefaultsBackend()
    let loads = Locked<[String]>([])
    let hold = Locked<DispatchSemaphore?>(nil)
    func load(_ id: SessionID) throws(StoreError) -> SessionRecord? {
        loads.withLock { $0.append(Thread.current.name ?? "") }
        hold.withLock { $0 }?.wait()
        return inner.load(id)
    }
    func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError) { try inner.save(id, record) }
    func touch(_ id: SessionID, accessed: Int64) throws(StoreError) { inner.touch(id, accessed: accessed) }
    func rename(_ id: SessionID, to newID: SessionID) throws(StoreError) { inner.rename(id, to: newID) }
    func remove(_ id: SessionID) throws(StoreError) { inner.remove(id) }
    func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        inner.removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
    }
    func count() throws(StoreError) -> Int { inner.count() }
}

/// With a store writer, a session not in memory is loaded by the registry's loader thread, never
/// by the thread that entered (a server thread): the request is deferred and runs again once it
/// is loaded.
@Suite struct SessionLoaderTests {
    static func registry(_ backend: HeldLoadBackend) -> SessionRegistry {
        SessionRegistry(configuration: SessionConfiguration(), backend: backend, groupCommitQueue: 16)
    }

    /// A stored session and a registry that has not seen it (a restart).
    static func restarted() throws -> (SessionRegistry, HeldLoadBackend, SessionID) {
        let backend = HeldLoadBackend()
        let first = registry(backend)
        let id = try first.enterSession(presented: nil) { $0.defaults.set(5, forKey: "count") }.id
        first.stopWriter()
        return (registry(backend), backend, id)
    }

    /// Enters `id` as a server thread does; returns the wait when the entry was deferred.
    static func enterDeferred(_ registry: SessionRegistry, _ id: SessionID) throws -> BusySession? {
        let entry = try registry.enter(presented: id) { _ in Issue.record("the body ran before the load") }
        guard case .busy(let busy) = entry else { return nil }
        return busy
    }

    @Test func aSessionNotInMemoryIsLoadedByTheLoaderAndTheRequestRunsAfter() throws {
        let (registry, backend, id) = try Self.restarted()
        defer { registry.stopWriter() }
        let busy = try #require(try Self.enterDeferred(registry, id), "entered without a load")
        let handed = Locked<LoadedSession?>(nil)
        let loaded = DispatchSemaphore(value: 0)
        busy.whenFree { session in
            handed.withLock { $0 = session }
            loaded.signal()
        }
        #expect(loaded.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(backend.loads.withLock { $0 } == ["appshell-loader"])
        var seen = -1
        let entry = try registry.enter(presented: id, after: handed.withLock { $0 }) { session in
            seen = session.defaults.integer(forKey: "count")
        }
        guard case .committed(let context) = entry else {
            Issue.record("entered after the load: \(entry)")
            return
        }
        #expect(seen == 5)
        #expect(context.id == id)
        #expect(!context.isNew)
        // Now in memory: entered at once.
        let again = try registry.enter(presented: id) { _ in }
        guard case .committed = again else {
            Issue.record("the loaded session was not kept in memory")
            return
        }
        #expect(backend.loads.withLock { $0 }.count == 1)
    }

    @Test func requestsForASessionBeingLoadedShareOneLoad() throws {
        let (registry, backend, id) = try Self.restarted()
        defer { registry.stopWriter() }
        let gate = DispatchSemaphore(value: 0)
        backend.hold.withLock { $0 = gate }
        let handed = Locked<[LoadedSession?]>([])
        let loaded = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            let busy = try #require(try Self.enterDeferred(registry, id))
            busy.whenFree { session in
                handed.withLock { $0.append(session) }
                loaded.signal()
            }
        }
        gate.signal()
        backend.hold.withLock { $0 = nil }
        for _ in 0..<3 { #expect(loaded.wait(timeout: .now() + .seconds(60)) == .success) }
        #expect(backend.loads.withLock { $0 }.count == 1)
        for session in handed.withLock({ $0 }) {
            var seen = -1
            let entry = try registry.enter(presented: id, after: session) {
                seen = $0.defaults.integer(forKey: "count")
            }
            guard case .committed(let context) = entry else {
                Issue.record("entered after the load: \(entry)")
                continue
            }
            #expect(seen == 5)
            #expect(!context.isNew)
        }
    }

    @Test func anIDWithNoRecordGetsANewSessionAfterItsLoad() throws {
        let backend = HeldLoadBackend()
        let registry = Self.registry(backend)
        defer { registry.stopWriter() }
        let unknown = SessionID.random()
        // The blocking API waits for the load, then makes a new session (no second load).
        let context = try registry.enterSession(presented: unknown) { _ in }
        #expect(context.isNew)
        #expect(context.id != unknown)
        #expect(backend.loads.withLock { $0 } == ["appshell-loader"])
    }

    /// A session that expired in memory is answered as a new one at once: nothing to load.
    @Test func anExpiredSessionInMemoryIsNotLoaded() throws {
        let backend = HeldLoadBackend()
        let clock = TestClock()
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100
        let registry = SessionRegistry(
            configuration: configuration, backend: backend, groupCommitQueue: 16, clock: clock.reading)
        defer { registry.stopWriter() }
        let id = try registry.enterSession(presented: nil) { $0.defaults.set(5, forKey: "count") }.id
        clock.advance(500)
        let entry = try registry.enter(presented: id) { _ in }
        switch entry {
        case .committed(let context), .committing(let context, _): #expect(context.isNew)
        case .busy: Issue.record("an expired session in memory was sent to be loaded")
        }
        #expect(backend.loads.withLock { $0 }.isEmpty)
    }

    @Test func withoutAWriterTheRequestLoadsItself() throws {
        let backend = HeldLoadBackend()
        let first = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
        let id = try first.enterSession(presented: nil) { $0.defaults.set(5, forKey: "count") }.id
        let restarted = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
        var seen = -1
        let entry = try restarted.enter(presented: id) { seen = $0.defaults.integer(forKey: "count") }
        guard case .committed = entry else {
            Issue.record("deferred without a loader: \(entry)")
            return
        }
        #expect(seen == 5)
        #expect(backend.loads.withLock { $0 }.count == 1)
    }
}
