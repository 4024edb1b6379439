import AppShellConcurrency
import AppShellSessions
import DefaultsBackendTestSupport
import Glibc
import Synchronization
import Testing

/// A memory backend whose group commits can be held (to gather writes, or to look at a session
/// whose write is not durable yet) and made to fail.
final class GatedBackend: ForwardingDefaultsBackend, @unchecked Sendable {
    // @unchecked: the fields below are read and written under `condition` only.
    /// The backend that does the work.
    let inner: any DefaultsBackend

    /// A backend forwarding to `inner` but for what it does itself.
    init(inner: any DefaultsBackend = MemoryDefaultsBackend()) { self.inner = inner }

    private let condition = Condition()
    private var open = true
    private var failing = false
    private var entered = 0
    private var sizes: [Int] = []

    /// Holds the next batches in `applyAll` until `release`.
    func hold() { locked { $0.open = false } }
    /// Lets the held batches and the next ones through.
    func release() {
        locked { $0.open = true }
    }
    /// Makes the batches from now on fail (or succeed again).
    func fail(_ failing: Bool) { locked { $0.failing = failing } }
    /// The writes of each batch, in order.
    var batches: [Int] { locked { $0.sizes } }

    /// Waits until `count` batches reached `applyAll` (held or not).
    func waitUntilEntered(_ count: Int) {
        condition.lock()
        while entered < count { condition.wait() }
        condition.unlock()
    }

    private func locked<Result>(_ body: (GatedBackend) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body(self)
    }

    func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        condition.lock()
        entered += 1
        condition.broadcast()
        while !open { condition.wait() }
        let fails = failing
        sizes.append(writes.count)
        condition.unlock()
        if fails { throw StoreError("disk full (test)") }
        for write in writes { try inner.apply(write) }
    }
}

/// Group commit: a `StoreWriter` commits the writes of many requests in one transaction, and a
/// request's changes are adopted (and answered) only once they are durable.
@Suite struct GroupCommitTests {
    static func make(queue: Int = 64) -> (SessionRegistry, GatedBackend) {
        let backend = GatedBackend()
        return (
            SessionRegistry(configuration: SessionConfiguration(), backend: backend, groupCommitQueue: queue), backend
        )
    }

    /// Sets `key` without waiting: the entry says whether the write waits for the writer.
    static func enterSetting(
        _ registry: SessionRegistry, _ id: SessionID?, _ key: String, _ value: Int,
        _ extra: (SessionContext) -> Void = { _ in }
    ) throws -> SessionRegistry.Entry {
        try registry.enter(presented: id) { session in
            session.defaults.set(value, forKey: key)
            extra(session)
        }
    }

    static func commit(of entry: SessionRegistry.Entry) -> (SessionContext, PendingCommit)? {
        if case .committing(let context, let commit) = entry { return (context, commit) }
        return nil
    }

    /// A durable session holding `key` = `value`.
    static func stored(_ registry: SessionRegistry, _ key: String, _ value: Int) throws -> SessionID {
        try registry.withSession(presentedID: nil) { $0.defaults.set(value, forKey: key) }.context.id
    }

    @Test func theWritesOfManySessionsShareOneTransaction() throws {
        let (registry, backend) = Self.make()
        defer { registry.stopWriter() }
        backend.hold()
        let first = try #require(Self.commit(of: Self.enterSetting(registry, nil, "n", 0)))
        backend.waitUntilEntered(1)
        // While the writer commits the first, ten requests of ten sessions gather.
        let others = try (1...10).map { try #require(Self.commit(of: Self.enterSetting(registry, nil, "n", $0))) }
        #expect(!first.1.isDone && others.allSatisfy { !$0.1.isDone })
        backend.release()
        try first.1.wait()
        for (_, commit) in others { try commit.wait() }
        #expect(backend.batches == [1, 10])
        let statistics = try #require(registry.writer).statistics.snapshot
        #expect(statistics.commits == 11)
        #expect(statistics.batches == 2)
        #expect(statistics.largestBatch == 10)
        #expect(statistics.commitErrors == 0)
        for (context, _) in others { #expect(try backend.load(context.id)?.values["n"] != nil) }
    }

    /// `PendingCommit.wait` makes its condition only for a thread that waits: threads that wait
    /// before the commit is done are all woken by it, and one that comes after returns at once;
    /// every callback runs, in the order given, and one given after at once.
    @Test func everyThreadWaitingForACommitIsWokenByIt() throws {
        let (registry, backend) = Self.make()
        defer { registry.stopWriter() }
        backend.hold()
        let (_, commit) = try #require(Self.commit(of: Self.enterSetting(registry, nil, "n", 1)))
        backend.waitUntilEntered(1)
        let woken = Locked(0)
        // Callbacks too, all of them, in the order given (the first is kept apart from the rest).
        let called = Locked<[Int]>([])
        for index in 0..<3 { commit.whenDone { _ in called.withLock { $0.append(index) } } }
        let threads = (0..<3).map { _ in
            BackgroundThread {
                if (try? commit.wait()) != nil { woken.withLock { $0 += 1 } }
            }
        }
        for thread in threads { thread.start() }
        usleep(50_000)
        #expect(woken.withLock { $0 } == 0)
        backend.release()
        for _ in 0..<5000 where woken.withLock({ $0 }) < 3 || called.withLock({ $0.count }) < 3 { usleep(1000) }
        #expect(woken.withLock { $0 } == 3)
        #expect(called.withLock { $0 } == [0, 1, 2])
        commit.whenDone { _ in called.withLock { $0.append(3) } }
        #expect(called.withLock { $0 } == [0, 1, 2, 3])
        try commit.wait()
        #expect(commit.isDone)
    }

    @Test func aLaterRequestOfTheSessionWaitsUntilTheWriteIsDurable() throws {
        let (registry, backend) = Self.make()
        defer { registry.stopWriter() }
        let id = try Self.stored(registry, "x", 1)
        backend.hold()
        let committed = Locked(false)
        let (_, commit) = try #require(
            Self.commit(
                of: Self.enterSetting(registry, id, "x", 2) { $0.afterCommit { committed.withLock { $0 = true } } }))
        // Not durable: not in the store, not adopted, nothing run after it, and the session's
        // next request does not run at all.
        #expect(try backend.load(id)?.values["x"] == .integer(1))
        #expect(!commit.isDone && !committed.withLock { $0 })
        let ran = Locked(false)
        let next = try registry.enter(presented: id) { _ in ran.withLock { $0 = true } }
        guard case .busy(let busy) = next else {
            Issue.record("a request of a committing session ran: \(next)")
            return
        }
        #expect(!ran.withLock { $0 })
        let freed = Locked(false)
        busy.whenFree { _ in freed.withLock { $0 = true } }
        #expect(!freed.withLock { $0 })
        backend.release()
        try commit.wait()
        #expect(committed.withLock { $0 })
        // The waiting request is let go right after the answer (on the writer's thread).
        for _ in 0..<5000 where !freed.withLock({ $0 }) { usleep(1000) }
        #expect(freed.withLock { $0 })
        #expect(try registry.withSession(presentedID: id.text) { $0.defaults.integer(forKey: "x") }.result == 2)
    }

    @Test func aFailedBatchFailsEveryRequestInItAndRestoresTheSessions() throws {
        let (registry, backend) = Self.make()
        defer { registry.stopWriter() }
        let a = try Self.stored(registry, "x", 1)
        let b = try Self.stored(registry, "x", 1)
        backend.hold()
        backend.fail(true)
        let outcomes = Locked<[String]>([])
        func note(_ what: String) -> (SessionContext) -> Void {
            { session in
                session.attachment = Marker()
                session.afterCommit { outcomes.withLock { $0.append("\(what) committed") } }
                session.afterRollback { outcomes.withLock { $0.append("\(what) rolled back") } }
            }
        }
        let first = try #require(Self.commit(of: Self.enterSetting(registry, a, "x", 2, note("a"))))
        let second = try #require(Self.commit(of: Self.enterSetting(registry, b, "x", 3, note("b"))))
        backend.release()
        #expect(throws: StoreError.self) { try first.1.wait() }
        #expect(throws: StoreError.self) { try second.1.wait() }
        #expect(Set(outcomes.withLock { $0 }) == ["a rolled back", "b rolled back"])
        backend.fail(false)
        // Both sessions are as they were last durable: same id, old value, no live object.
        for id in [a, b] {
            let seen = try registry.withSession(presentedID: id.text) {
                ($0.defaults.integer(forKey: "x"), $0.attachment)
            }
            #expect(seen.result.0 == 1)
            #expect(seen.result.1 == nil)
            #expect(!seen.context.isNew)
            #expect(try backend.load(id)?.values["x"] == .integer(1))
        }
        #expect(try #require(registry.writer).statistics.snapshot.commitErrors >= 1)
    }

    @Test func aFullQueueRefusesAtOnceWithRetryAfterAndChangesNothing() throws {
        let (registry, backend) = Self.make(queue: 1)
        defer { registry.stopWriter() }
        let id = try Self.stored(registry, "x", 1)
        backend.hold()
        let held = try #require(Self.commit(of: Self.enterSetting(registry, nil, "n", 1)))
        backend.waitUntilEntered(2)
        // The writer holds one batch; one write waits; the next finds the queue full.
        let waiting = try #require(Self.commit(of: Self.enterSetting(registry, nil, "n", 2)))
        let rolledBack = Locked(false)
        do {
            _ = try Self.enterSetting(registry, id, "x", 5) { $0.afterRollback { rolledBack.withLock { $0 = true } } }
            Issue.record("a write was queued beyond the limit")
        } catch let error as StoreError {
            #expect(error.retryAfterSeconds == 1)
        }
        #expect(rolledBack.withLock { $0 })
        backend.release()
        try held.1.wait()
        try waiting.1.wait()
        #expect(try registry.withSession(presentedID: id.text) { $0.defaults.integer(forKey: "x") }.result == 1)
        #expect(try backend.load(id)?.values["x"] == .integer(1))
    }

    @Test func aRotationMovesTheIDOnlyOnceItIsDurable() throws {
        let (registry, backend) = Self.make()
        defer { registry.stopWriter() }
        let old = try Self.stored(registry, "x", 1)
        backend.hold()
        let (context, commit) = try #require(
            Self.commit(of: Self.enterSetting(registry, old, "x", 2) { $0.rotateID() }))
        let new = context.id
        // Until the rename is durable the old id still names the session (its requests wait).
        guard case .busy = try registry.enter(presented: old, { _ in }) else {
            Issue.record("the old id was retired before the rename was durable")
            return
        }
        #expect(try backend.load(old) != nil && backend.load(new) == nil)
        backend.release()
        try commit.wait()
        #expect(try backend.load(old) == nil)
        #expect(try backend.load(new)?.values["x"] == .integer(2))
        #expect(try registry.withSession(presentedID: old.text) { _ in }.context.isRetired)
        #expect(try registry.withSession(presentedID: new.text) { $0.defaults.integer(forKey: "x") }.result == 2)
    }

    @Test func concurrentIncrementsOverSQLiteAreNeverLost() throws {
        try BackendTestDirectory.with { directory throws in try incrementConcurrently(directory.path) }
    }

    /// Eight threads increment counters of four sessions over SQLite through the writer (the
    /// requests of a session wait for each other's commits): no increment is lost.
    func incrementConcurrently(_ directory: String) throws {
        let backend = try SQLiteDefaultsBackend(path: directory + "/sessions.sqlite")
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend, groupCommitQueue: 16)
        defer { registry.stopWriter() }
        let ids = try (0..<4).map { _ in try Self.stored(registry, "n", 0) }
        let threads = 8
        let increments = 40
        let failures = Locked(0)
        let done = Condition()
        let finished = Locked(0)
        for thread in 0..<threads {
            let worker = BackgroundThread {
                for step in 0..<increments {
                    let id = ids[(thread + step) % ids.count]
                    do {
                        _ = try registry.withSession(presentedID: id.text) { session in
                            session.defaults.set(session.defaults.integer(forKey: "n") + 1, forKey: "n")
                        }
                    } catch {
                        // A full queue refuses at once: the increment did not happen; try again.
                        failures.withLock { $0 += 1 }
                    }
                }
                done.lock()
                finished.withLock { $0 += 1 }
                done.broadcast()
                done.unlock()
            }
            worker.start()
        }
        done.lock()
        while finished.withLock({ $0 }) < threads { done.wait() }
        done.unlock()
        var total = 0
        for id in ids {
            guard case .integer(let count) = try backend.load(id)?.values["n"] else {
                Issue.record("session \(id) lost its count")
                continue
            }
            total += count
        }
        #expect(total == threads * increments - failures.withLock { $0 })
        let statistics = try #require(registry.writer).statistics.snapshot
        #expect(statistics.commits == ids.count + threads * increments - failures.withLock { $0 })
        #expect(statistics.commitErrors == 0)
    }

    @Test func aRegistryReleasedOnTheWritersThreadLetsItEnd() throws {
        let backend = GatedBackend()
        var registry: SessionRegistry? = SessionRegistry(
            configuration: SessionConfiguration(), backend: backend, groupCommitQueue: 4)
        let writer = try #require(registry?.writer)
        backend.hold()
        let entry = try Self.enterSetting(registry.unsafelyUnwrapped, nil, "x", 1)
        let (_, commit) = try #require(Self.commit(of: entry))
        // The commit's completion now holds the last reference: the registry ends on the writer's
        // thread, which stops its own writer.
        registry = nil
        backend.release()
        try commit.wait()
        let stopped = Condition()
        let done = Locked(false)
        let stopper = BackgroundThread {
            writer.stop()
            stopped.lock()
            done.withLock { $0 = true }
            stopped.broadcast()
            stopped.unlock()
        }
        stopper.start()
        stopped.lock()
        var waited = 0
        while !done.withLock({ $0 }) && waited < 50 {
            _ = stopped.wait(milliseconds: 100)
            waited += 1
        }
        stopped.unlock()
        #expect(done.withLock { $0 }, "the writer's thread waits for itself")
    }

    @Test func withoutAWriterEveryRequestCommitsAtOnce() throws {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        #expect(registry.writer == nil)
        guard case .committed(let context) = try Self.enterSetting(registry, nil, "x", 1) else {
            Issue.record("the memory store's write waited")
            return
        }
        #expect(try registry.backend.load(context.id)?.values["x"] == .integer(1))
    }

    @Test func theStatisticsRenderAsPrometheusText() {
        var snapshot = StoreStatistics.Snapshot()
        snapshot.commits = 3
        snapshot.batches = 2
        snapshot.batchSizes[0] = 1
        snapshot.batchSizes[1] = 1
        snapshot.latencies[0] = 2
        let text = snapshot.prometheusText()
        #expect(text.contains("appshell_store_commits_total 3\n"))
        #expect(text.contains("appshell_store_batches_total 2\n"))
        #expect(text.contains("appshell_store_batch_writes_bucket{le=\"2\"} 2\n"))
        #expect(text.contains("appshell_store_commit_seconds_bucket{le=\"+Inf\"} 2\n"))
    }
}

/// A live object kept with a session in memory.
private final class Marker {}
