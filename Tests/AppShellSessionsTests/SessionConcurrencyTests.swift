import AppShellConcurrency
import AppShellSessions
import Foundation
import Synchronization
import Testing

/// Many threads on one registry: no lost update, no crash (and no data race under
/// `swift test --sanitize=thread`, which `make test` runs on this suite).
@Suite struct SessionConcurrencyTests {
    static func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                body(index)
                group.leave()
            }
        }
        group.wait()
    }

    @Test func sixtyFourThreadsOnOneSessionLoseNoUpdate() throws {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        let cookie = try registry.withSession(presentedID: nil) { $0.defaults.set(0, forKey: "count") }.context.id.text
        let failures = Atomic<Int>(0)
        Self.runThreads(64) { _ in
            for _ in 0..<50 {
                do {
                    let outcome = try registry.withSession(presentedID: cookie) { session in
                        session.defaults.set(session.defaults.integer(forKey: "count") + 1, forKey: "count")
                    }
                    if outcome.context.isNew { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        let total = try registry.withSession(presentedID: cookie) { $0.defaults.integer(forKey: "count") }.result
        #expect(total == 64 * 50)
    }

    @Test func sixtyFourThreadsAcrossAThousandSessionsLoseNoUpdate() throws {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        var cookies: [String] = []
        for _ in 0..<1000 {
            cookies.append(
                try registry.withSession(presentedID: nil) { $0.defaults.set(0, forKey: "n") }.context.id.text)
        }
        let shared = cookies
        let failures = Atomic<Int>(0)
        Self.runThreads(64) { thread in
            for step in 0..<100 {
                let cookie = shared[(thread * 131 + step * 17) % 1000]
                do {
                    _ = try registry.withSession(presentedID: cookie) { session in
                        session.defaults.set(session.defaults.integer(forKey: "n") + 1, forKey: "n")
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        var total = 0
        for cookie in cookies {
            total += try registry.withSession(presentedID: cookie) { $0.defaults.integer(forKey: "n") }.result
        }
        #expect(total == 64 * 100)
        #expect(registry.count == 1000)
    }

    @Test func rotationUnderContentionKeepsEveryUpdate() throws {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        let first = try registry.withSession(presentedID: nil) { $0.defaults.set(0, forKey: "n") }.context.id.text
        let current = Locked(first)
        let applied = Atomic<Int>(0)
        Self.runThreads(16) { thread in
            for step in 0..<40 {
                let cookie = current.withLock { $0 }
                guard
                    let outcome = try? registry.withSession(
                        presentedID: cookie,
                        { session -> Bool in
                            // A retired id (rotated by another thread meanwhile) names no session.
                            guard !session.isNew && !session.isRetired else { return false }
                            session.defaults.set(session.defaults.integer(forKey: "n") + 1, forKey: "n")
                            if (thread + step) % 5 == 0 { session.rotateID() }
                            return true
                        })
                else { continue }
                if outcome.result {
                    applied.add(1, ordering: .relaxed)
                    if outcome.context.needsCookie { current.withLock { $0 = outcome.context.id.text } }
                }
            }
        }
        let final = current.withLock { $0 }
        let total = try registry.withSession(presentedID: final) { $0.defaults.integer(forKey: "n") }
        #expect(total.context.isNew == false)
        #expect(total.result == applied.load(ordering: .relaxed))
        #expect(applied.load(ordering: .relaxed) > 0)
    }
}
