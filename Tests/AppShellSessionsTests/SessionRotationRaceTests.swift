import AppShellConcurrency
import AppShellSessions
import DefaultsBackendTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// A memory backend whose next `load` can be held after it read the record: a pause point for a
/// load that races a rename (the real memory backend does the work).
final class PausingBackend: ForwardingDefaultsBackend, @unchecked Sendable {
    // @unchecked: its own state is an atomic and two semaphores.
    /// The backend that does the work.
    let inner: any DefaultsBackend

    /// A backend forwarding to `inner` but for what it does itself.
    init(inner: any DefaultsBackend = MemoryDefaultsBackend()) { self.inner = inner }

    /// Set to hold the next load after it read its record.
    let pauseNextLoad = Atomic<Bool>(false)
    /// Signalled when a load is held; signal `resume` to let it return.
    let paused = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)

    func load(_ id: SessionID) throws(StoreError) -> SessionRecord? {
        let record = try inner.load(id)
        if pauseNextLoad.exchange(false, ordering: .relaxed) {
            paused.signal()
            resume.wait()
        }
        return record
    }
}

/// Rotation and expiry against requests that race them: a retired id never comes back, and the
/// sweeper never deletes the row of a session that is live in memory.
@Suite struct SessionRotationRaceTests {
    /// A request presenting the old id loads the record before a rotation's rename, and offers it
    /// to the registry after the rotation moved the session: it must not get the old id's values
    /// back (it is answered as a retired id's request: no session, no cookie).
    @Test func aLoadRacingARotationCannotBringTheOldIDBack() throws {
        let backend = PausingBackend()
        let clock = TestClock()
        // A stored session, then a "restart": a registry that holds nothing in memory.
        let first = SessionRegistry(configuration: SessionConfiguration(), backend: backend, clock: clock.reading)
        let old = try first.withSession(presentedID: nil) { $0.defaults.set("ann", forKey: "user") }.context.id
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend, clock: clock.reading)

        // The racer: its load reads the old record and is held before it reaches memory.
        backend.pauseNextLoad.store(true, ordering: .relaxed)
        let racer = Locked<(user: String?, isRetired: Bool, needsCookie: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let outcome = try? registry.withSession(presentedID: old.text) { $0.defaults.string(forKey: "user") }
            racer.withLock { $0 = outcome.map { ($0.result, $0.context.isRetired, $0.context.needsCookie) } }
            done.signal()
        }
        thread.start()
        backend.paused.wait()

        // Meanwhile the owner logs out: the id rotates and the user is removed.
        let rotated = try registry.withSession(presentedID: old.text) { session in
            session.defaults.removeObject(forKey: "user")
            session.rotateID()
        }.context
        #expect(rotated.id != old)
        #expect(try backend.load(old) == nil)

        backend.resume.signal()
        done.wait()
        let outcome = try #require(racer.withLock { $0 })
        #expect(outcome.isRetired, "the racing request was given the retired id's session")
        #expect(!outcome.needsCookie)
        #expect(outcome.user == nil, "the racing request saw the retired id's values")
        // And the old id stays retired; once the grace is over it is only an unknown id.
        let later = try registry.withSession(presentedID: old.text) { $0.defaults.string(forKey: "user") }
        #expect(later.context.isRetired)
        #expect(later.result == nil)
        clock.advance(SessionRegistry.retiredIDGraceSeconds + 1)
        let muchLater = try registry.withSession(presentedID: old.text) { $0.defaults.string(forKey: "user") }
        #expect(muchLater.context.isNew)
        #expect(muchLater.context.id != old)
        #expect(muchLater.result == nil)
    }

    /// The backend's `accessed` lags the in-memory last access by up to the touch interval; the
    /// sweeper must not take that lag for idleness.
    @Test func theSweeperKeepsTheRowOfASessionLiveInMemory() throws {
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100  // touch interval 25 s
        let backend = MemoryDefaultsBackend()
        let clock = TestClock()
        let registry = SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading)
        let id = try registry.withSession(presentedID: nil) { $0.defaults.set(true, forKey: "isLogin") }.context.id
        clock.advance(24)
        // A read within the touch interval: memory says "used now", the row still says "used at 0".
        _ = try registry.withSession(presentedID: id.text) { $0.defaults.bool(forKey: "isLogin") }
        clock.advance(90)  // 90 s idle in memory (live), 114 s by the row
        try registry.sweep()
        #expect(backend.load(id) != nil, "the sweeper deleted the row of a live session")
        // The next request refreshes the row, so a restart after it still finds the user logged in.
        _ = try registry.withSession(presentedID: id.text) { $0.defaults.bool(forKey: "isLogin") }
        let restarted = SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading)
        let after = try restarted.withSession(presentedID: id.text) { $0.defaults.bool(forKey: "isLogin") }
        #expect(!after.context.isNew)
        #expect(after.result)
    }

    /// A commit whose write fails leaves the session as it was: id, values and snapshot, and the
    /// attachment is dropped (it may be half-changed) so the next request rebuilds it from the
    /// snapshot; the work meant for after the commit does not run, the rollback work does.
    @Test func aFailedCommitChangesNothingInMemory() throws {
        let backend = FaultyBackend()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
        let id = try registry.withSession(presentedID: nil) { session in
            session.defaults.set("before", forKey: "user")
            session.snapshot = Array("v1".utf8)
            session.attachment = NSObject()
        }.context.id
        backend.failing.store(true, ordering: .relaxed)
        let committed = Locked(false)
        let rolledBack = Locked(false)
        #expect(throws: StoreError.self) {
            try registry.withSession(presentedID: id.text) { session in
                session.defaults.set("after", forKey: "user")
                session.snapshot = Array("v2".utf8)
                session.attachment = NSObject()
                session.rotateID()
                session.afterCommit { committed.withLock { $0 = true } }
                session.afterRollback { rolledBack.withLock { $0 = true } }
            }
        }
        #expect(!committed.withLock { $0 })
        #expect(rolledBack.withLock { $0 })
        backend.failing.store(false, ordering: .relaxed)
        let after = try registry.withSession(presentedID: id.text) { session in
            (session.defaults.string(forKey: "user"), session.snapshot, session.attachment == nil)
        }
        #expect(!after.context.isNew, "the old id no longer names the session")
        #expect(after.context.id == id)
        #expect(after.result.0 == "before")
        #expect(after.result.1 == Array("v1".utf8))
        #expect(after.result.2, "the attachment changed by the failed request was kept")
    }
}

/// Requests that present an id a rotation just retired: they get no session and no cookie.
@Suite struct RetiredIDTests {
    /// A request waits for the session's lock while a login rotates the id; when its turn comes
    /// the id it presented names nothing. It must not get a new session and a cookie, which would
    /// replace the rotated one in the browser.
    @Test func aRequestThatWaitedWhileTheIDRotatedGetsNoSessionAndNoCookie() throws {
        let clock = TestClock()
        let registry = SessionRegistry(
            configuration: SessionConfiguration(), backend: MemoryDefaultsBackend(), clock: clock.reading)
        let old = try registry.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "n") }.context.id
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let rotating = Thread {
            _ = try? registry.withSession(presentedID: old.text) { session in
                entered.signal()
                release.wait()
                session.defaults.set(true, forKey: "isLogin")
                session.rotateID()
            }
            done.signal()
        }
        rotating.start()
        entered.wait()
        let created = registry.createdCount.load(ordering: .relaxed)
        let waiter = Locked<(n: Int, isRetired: Bool, needsCookie: Bool, isNew: Bool)?>(nil)
        let waited = DispatchSemaphore(value: 0)
        let waiting = Thread {
            let outcome = try? registry.withSession(presentedID: old.text) { session -> Int in
                session.defaults.set(99, forKey: "n")
                return session.defaults.integer(forKey: "n")
            }
            waiter.withLock {
                $0 = outcome.map {
                    ($0.result, $0.context.isRetired, $0.context.needsCookie, $0.context.isNew)
                }
            }
            waited.signal()
        }
        waiting.start()
        // Most likely waiting for the lock by now; if not, it comes after the rotation, which
        // must give the same answer.
        Thread.sleep(forTimeInterval: 0.1)
        release.signal()
        done.wait()
        waited.wait()
        let outcome = try #require(waiter.withLock { $0 })
        #expect(outcome.isRetired)
        #expect(!outcome.isNew)
        #expect(!outcome.needsCookie, "a retired id's request was sent a cookie")
        #expect(registry.createdCount.load(ordering: .relaxed) == created, "a session was made for a retired id")
        #expect(registry.count == 1)
    }

    @Test func nothingARetiredIDsRequestDoesIsKept() throws {
        let clock = TestClock()
        let backend = MemoryDefaultsBackend()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend, clock: clock.reading)
        let old = try registry.withSession(presentedID: nil) { $0.defaults.set(1, forKey: "n") }.context.id
        let new = try registry.withSession(presentedID: old.text) { $0.rotateID() }.context.id
        let ran = Locked(false)
        let retired = try registry.withSession(presentedID: old.text) { session in
            session.defaults.set(2, forKey: "n")
            session.snapshot = [1]
            session.rotateID()
            session.afterCommit { ran.withLock { $0 = true } }
        }.context
        #expect(retired.isRetired)
        #expect(!retired.needsCookie)
        #expect(!ran.withLock { $0 }, "work for after a commit ran for a retired id")
        #expect(backend.count() == 1)
        let current = try registry.withSession(presentedID: new.text) {
            ($0.defaults.integer(forKey: "n"), $0.snapshot)
        }
        #expect(current.result.0 == 1)
        #expect(current.result.1 == nil)
        #expect(!current.context.isNew)
    }
}

/// Work the server does on its own (a timer, a reminder) is not the user using the session.
@Suite struct ServerWorkTests {
    @Test func workWithALiveSessionDoesNotKeepItAlive() throws {
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100
        let clock = TestClock()
        let backend = MemoryDefaultsBackend()
        let registry = SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading)
        let id = try registry.withSession(presentedID: nil) { $0.defaults.set(true, forKey: "isLogin") }.context.id
        clock.advance(90)
        #expect(try registry.withLiveSession(id) { $0.defaults.bool(forKey: "isLogin") } == true)
        #expect(backend.load(id)?.accessed == clock.reading() - 90, "the server's own work touched the stored session")
        clock.advance(20)  // 110 s after the user's last request
        let later = try registry.withSession(presentedID: id.text) { $0.defaults.bool(forKey: "isLogin") }
        #expect(later.context.isNew, "the server's own work kept an idle session alive")
        #expect(!later.result)
    }

    @Test func workWithAStoredSessionNotInMemoryDoesNotKeepItAlive() throws {
        var configuration = SessionConfiguration()
        configuration.idleTimeoutSeconds = 100
        let clock = TestClock()
        let backend = MemoryDefaultsBackend()
        let first = SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading)
        let id = try first.withSession(presentedID: nil) { $0.defaults.set(true, forKey: "isLogin") }.context.id
        let registry = SessionRegistry(configuration: configuration, backend: backend, clock: clock.reading)
        clock.advance(90)
        #expect(try registry.withLiveSession(id) { $0.defaults.bool(forKey: "isLogin") } == true)
        clock.advance(20)
        #expect(try registry.withSession(presentedID: id.text) { _ in }.context.isNew)
    }
}
