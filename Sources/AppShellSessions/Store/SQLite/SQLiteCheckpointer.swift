import AppShellConcurrency
import Synchronization

/// The thread that checkpoints a store's write-ahead log, so that no commit has to.
///
/// DESIGN: in WAL mode a commit appends to the log; a checkpoint copies the log into the database
/// file and syncs both to the disk (with `synchronous=NORMAL` that is the only time anything is
/// synced). Left to itself, SQLite checkpoints on the connection that commits, once the log holds
/// 1 000 frames: on the store writer's thread, inside a group commit, so the requests of that batch
/// and of every batch queued behind it waited for three `fdatasync`s — tens of milliseconds on a
/// quiet disk, seconds on a busy one (the logged-in users' tail under `make flood`, the Reliability
/// article). Here the writer's connection only reports the log's size after each commit
/// (`SQLiteConnection.reportCommits(to:)`); past `threshold` frames this thread runs a passive
/// checkpoint on a connection of its own, which neither waits for nor blocks the writer or the
/// readers, and does the slow part: copying the log and syncing it and the file. Commits made
/// meanwhile stay in the log, and the log restarts from its beginning only once a checkpoint
/// copied all of it, which a pass racing with commits never does: so the writer's connection
/// copies the few frames left, after a batch's requests were answered (`takeCatchUp`,
/// `SQLiteDefaultsBackend.afterBatch`), and its next commit restarts the log instead of growing
/// it. Durability: a commit is in the log when it returns, and the log reaches the disk at
/// checkpoints — at the latest `interval` after a commit (a pass syncs the log before it copies),
/// however few frames the log holds: before the time bound a quiet store could keep its last
/// commits unsynced for hours, until 1 000 frames had gathered.
final class SQLiteCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is used by the checkpointing thread alone (and by `stop` once that
    // thread has ended); the flags are guarded by `condition`.

    /// The log's size, in frames (pages), from which a commit asks for a checkpoint: 16 MiB of
    /// 4 KiB pages. SQLite's own is 1 000; under a stream of actions (`make bench` (e)) a
    /// checkpoint then ran about 30 times a second and cost 0.6 µs per action, 0.3 µs with 4 000.
    static let defaultThreshold = 4000

    /// At most how long, in milliseconds, a commit stays in the log before a checkpoint syncs it.
    static let defaultInterval = 1000

    /// The log's size, in frames, from which a commit asks for a checkpoint.
    let threshold: Int
    /// At most how long, in milliseconds, a commit waits for a checkpoint to sync it.
    let interval: Int
    /// Checkpoints run (passive ones that found nothing to copy included).
    let checkpoints = Atomic<Int>(0)
    /// Checkpoints that failed (the log stays; the next commit past the threshold asks again).
    let failures = Atomic<Int>(0)

    private let connection: SQLiteConnection
    private let condition = Condition()
    private let hold = Condition()
    private var requested = false
    private var running = false
    private var stopping = false
    /// A pass ended with frames left to copy: the writer's connection finishes it (`takeCatchUp`).
    private var catchUpDue = false
    /// A commit was made since the last pass began (or a pass left frames): the next tick of
    /// `interval` runs one. Set by the committing thread without the lock.
    private let unsynced = Atomic<Bool>(false)

    /// A checkpointer with its own connection to the store at `path`, checkpointing past
    /// `threshold` frames and at most `interval` milliseconds after a commit; its thread, named
    /// `name`, starts now, with the scheduling policy of the thread that opens the store (a thread
    /// started later by a commit's report would inherit the committing thread's, maybe
    /// `SCHED_IDLE`).
    init(
        path: String, threshold: Int = SQLiteCheckpointer.defaultThreshold,
        interval: Int = SQLiteCheckpointer.defaultInterval, name: String = "appshell-checkpt"
    )
        throws(StoreError)
    {
        connection = try SQLiteConnection(path: path)
        // A connection opens the log at its first read; until then a checkpoint on it does nothing
        // and says so with success.
        _ = try connection.query("SELECT count(*) FROM sqlite_schema") { $0.int64(at: 0) }
        self.threshold = max(1, threshold)
        self.interval = max(1, interval)
        running = true
        let thread = BackgroundThread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Called on the committing thread after each commit with the frames in the log: past the
    /// threshold, wakes the checkpointing thread; below, leaves the commit to its next tick.
    /// Never waits for a checkpoint.
    func committed(frames: Int) {
        if !unsynced.load(ordering: .relaxed) { unsynced.store(true, ordering: .relaxed) }
        guard frames >= threshold else { return }
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, !catchUpDue else { return }
        requested = true
        condition.signal()
    }

    /// Ends the thread (a checkpoint under way finishes first) and closes its connection; the
    /// store's last connection to close then checkpoints what is left. Safe to call more than once.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
        connection.close()
    }

    /// Runs `body` with no checkpoint running or starting meanwhile (for tests: what a commit
    /// does on its own, with the checkpointer held).
    func withCheckpointsHeld<Result>(_ body: () throws -> Result) rethrows -> Result {
        hold.lock()
        defer { hold.unlock() }
        return try body()
    }

    private func run() {
        while true {
            condition.lock()
            while !requested && !stopping {
                // Woken by a commit past the threshold, or after `interval`: then a pass is due
                // for what was committed since the last one.
                if !condition.wait(milliseconds: interval), unsynced.load(ordering: .relaxed) { requested = true }
            }
            if stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            requested = false
            condition.unlock()
            hold.lock()
            var unfinished = false
            unsynced.store(false, ordering: .relaxed)
            do {
                let pass = try connection.checkpointPassively()
                unfinished = pass.copied < pass.frames
            } catch {
                // The log stays as it is (a full disk, say) and the next tick, or the next commit
                // past the threshold, tries again; the writer's own commits report what is wrong
                // with the store.
                unsynced.store(true, ordering: .relaxed)
                failures.add(1, ordering: .relaxed)
            }
            // A pass that left frames may not have synced them (SQLite syncs the log only when it
            // can copy something): the next tick tries again, if the writer did not finish it.
            if unfinished { unsynced.store(true, ordering: .relaxed) }
            condition.lock()
            catchUpDue = unfinished
            condition.unlock()
            checkpoints.add(1, ordering: .relaxed)
            hold.unlock()
        }
    }

    /// Whether a pass left frames for the writer's connection to copy (then no new pass is asked
    /// for until it did); true once per such pass.
    func takeCatchUp() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard catchUpDue else { return false }
        catchUpDue = false
        return true
    }
}
