import AppShellConcurrency
import Glibc

/// The one thread that writes requests' changes to a backend, many at a time: group commit.
///
/// DESIGN: requests run on the server's threads and hand their writes here (`submit`) instead of
/// committing them there; their answers wait, their connections suspended. The writer takes every
/// write waiting, makes them in ONE transaction (`DefaultsBackend.applyAll`: one commit, one
/// append to SQLite's write-ahead log for the writes of many requests and sessions), then calls
/// each write's completion, in the order they were submitted, with `nil` (the write is durable)
/// or the error (none of the batch's writes holds). While it commits, the next writes gather for
/// the next batch, so the busier the store, the larger the batches and the fewer the commits per
/// request — the way PostgreSQL commits the WAL of many transactions with one flush.
///
/// The queue is bounded (`queueLimit` writes waiting): `submit` refuses at once when it is full,
/// so that the request can be refused (503 with `Retry-After`) with nothing changed.
package final class StoreWriter: Sendable {
    /// Where the writes go.
    package let backend: any DefaultsBackend
    /// Writes that may wait for the writer at most (each request's changes count as one).
    package let queueLimit: Int
    /// Commits, batches, errors and latencies.
    package let statistics = StoreStatistics()

    /// What to call once a request's `count` writes are done (all of the batch's, or none of
    /// them; in a shared store a request's write may also meet a conflict alone).
    private struct Completion {
        let count: Int
        let done: @Sendable (StoreError?) -> Void
    }

    /// The queue, guarded by the service's condition: the writes in order, as the backend takes
    /// them (a batch is handed over as it is, no copy of its writes), and the requests' completions.
    private final class State: @unchecked Sendable {
        var writes: [StoreWrite] = []
        var completions: [Completion] = []
    }

    private let state = State()
    private let service: ServiceThread

    /// A writer to `backend` with room for `queueLimit` waiting writes (at least 1); its thread,
    /// named `name`, starts now.
    ///
    /// Now, on the thread that makes the writer (at start-up, the main thread), not at the first
    /// write: a new thread inherits its creator's scheduling policy, and an unprivileged thread can
    /// never raise it again. The first write used to come from a login, on the password-check pool
    /// (`SCHED_IDLE`), so the writer ran as `SCHED_IDLE` for the life of the process: with the
    /// cores busy (a flood) it got a core only about 0.3 % of the time, and every action waited for
    /// it (users' actions' p99 in the hundreds of milliseconds; the Reliability article).
    package init(backend: any DefaultsBackend, queueLimit: Int, name: String = "appshell-store-writer") {
        self.backend = backend
        self.queueLimit = max(1, queueLimit)
        service = ServiceThread(name: name)
        service.start { [self] in run() }
    }

    deinit { stop() }

    /// Queues `writes` (one request's changes, made all or nothing with the rest of their batch);
    /// `done` is called on the writer's thread once they are durable (`nil`) or refused (the
    /// error). Returns false, and queues nothing, when the queue is full or the writer stopped.
    package func submit(_ writes: [StoreWrite], then done: @escaping @Sendable (StoreError?) -> Void) -> Bool {
        queue(Completion(count: writes.count, done: done)) { $0.append(contentsOf: writes) }
    }

    /// Queues one write, as `submit(_:then:)` with an array of it.
    package func submit(_ write: StoreWrite, then done: @escaping @Sendable (StoreError?) -> Void) -> Bool {
        queue(Completion(count: 1, done: done)) { $0.append(write) }
    }

    private func queue(_ completion: Completion, _ addWrites: (inout [StoreWrite]) -> Void) -> Bool {
        let condition = service.condition
        condition.lock()
        guard !service.isStopping, state.completions.count < queueLimit else {
            condition.unlock()
            return false
        }
        addWrites(&state.writes)
        state.completions.append(completion)
        condition.signal()
        condition.unlock()
        return true
    }

    /// Writes waiting now (not counting the batch being committed).
    package var queued: Int {
        service.condition.lock()
        defer { service.condition.unlock() }
        return state.completions.count
    }

    /// Takes no more writes, commits those waiting and returns once the thread is done with them
    /// (at shutdown, after the server stopped: every answered write is then in the store). Called
    /// on the writer's own thread (the last reference to its registry dropped there), it does not
    /// wait: the thread ends once it returns to its loop.
    package func stop() { service.stop() }

    /// Runs the calling thread (the writer's) as `SCHED_BATCH`: the same share of a core as a
    /// normal thread (same nice value), but a wake-up never preempts the thread running: woken by
    /// a request's write on a core that a server thread keeps busy, the writer waits for that
    /// thread to block (in `epoll_wait`, every ready request handled) or to end its slice, and so
    /// commits the writes of those requests together. As `SCHED_OTHER`, with the server pinned to
    /// one core, it took the core at once at the first write after a batch: 85 % of its
    /// transactions carried one write (of 8 602 in 5 s of scenario (e), 7 341), a commit, a log
    /// append and two thread switches per action for them. On an idle core it runs at once, as
    /// before. Lowering one's own policy needs no privilege; refused, it keeps its policy.
    @discardableResult
    static func runAsBatch() -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = 0
        return sched_setscheduler(0, batchPolicy, &parameters) == 0
    }

    /// Linux's `SCHED_BATCH` (Glibc's module leaves the GNU extensions out).
    static let batchPolicy: Int32 = 3

    private func run() {
        StoreWriter.runAsBatch()
        let condition = service.condition
        while true {
            condition.lock()
            guard service.waitForWork({ !state.completions.isEmpty }) else {
                condition.unlock()
                return
            }
            let batch = Batch()
            swap(&batch.writes, &state.writes)
            swap(&batch.completions, &state.completions)
            condition.unlock()
            commit(batch)
        }
    }

    private func commit(_ batch: Batch) {
        let started = StoreWriter.seconds()
        var failure: StoreError?
        var conflicts: Set<Int> = []
        do {
            conflicts = try backend.applyAllReportingConflicts(batch.writes)
        } catch {
            failure = error
        }
        let refused = conflicts.isEmpty ? [] : Self.refused(batch.completions, conflicts)
        statistics.record(
            writes: batch.completions.count, conflicts: refused.count { $0 },
            seconds: StoreWriter.seconds() - started, failed: failure != nil)
        // As one batch: the answers' connections are resumed together at its end, and the writes
        // and completions (their closures hold the requests' objects) let go of by the server
        // thread that resumes them (`ThreadBatch`).
        ThreadBatch.run {
            if refused.isEmpty {
                for completion in batch.completions { completion.done(failure) }
            } else {
                for (completion, isRefused) in zip(batch.completions, refused) {
                    completion.done(isRefused ? StoreWriter.conflict : failure)
                }
            }
            ThreadBatch.leave(batch)
        }
        backend.afterBatch()
    }

    /// Whether each request of a batch (its completion, by position) had a write among the
    /// `conflicts` (positions in the batch's writes, each request's writes following the last's).
    private static func refused(_ completions: [Completion], _ conflicts: Set<Int>) -> [Bool] {
        var start = 0
        return completions.map { completion in
            defer { start += completion.count }
            return (start..<start + completion.count).contains(where: conflicts.contains)
        }
    }

    /// A batch: its writes and their requests' completions; once done, handed to another thread
    /// to be let go of there.
    private final class Batch {
        var writes: [StoreWrite] = []
        var completions: [Completion] = []
    }

    /// A request's write refused because its session changed meanwhile (through another instance).
    static let conflict = StoreError(
        "the session was changed at the same moment through another instance; nothing was changed", isConflict: true)

    private static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
