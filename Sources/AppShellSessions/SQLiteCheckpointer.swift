import AppShellConcurrency
import Synchronization

/// The thread that checkpoints a store's write-ahead log, so that no commit has to.
///
/// DESIGN: in WAL mode a commit appends to the log; a checkpoint copies the log into the database
/// file and syncs both to the disk (with `synchronous=NORMAL` that is the only time anything is
/// synced). Left to itself, SQLite checkpoints on the connection that commits, once the log holds
/// 1 000 frames: on the store writer's thread, inside a group commit, so the requests of that batch
/// and of every batch queued behind it waited for three `fdatasync`s — tens of milliseconds on a
/// quiet disk, seconds on a busy one (the logged-in users' tail under `make flood`, README
/// Reliability). Here the writer's connection only reports the log's size after each commit
/// (`SQLiteConnection.reportCommits(to:)`); past `threshold` frames this thread runs a passive
/// checkpoint on a connection of its own, which neither waits for nor blocks the writer or the
/// readers, and does the slow part: copying the log and syncing it and the file. Commits made
/// meanwhile stay in the log, and the log restarts from its beginning only once a checkpoint
/// copied all of it, which a pass racing with commits never does: so the writer's connection
/// copies the few frames left, after a batch's requests were answered (`takeCatchUp`,
/// `SQLiteDefaultsBackend.afterBatch`), and its next commit restarts the log instead of growing
/// it. Durability is as it was: a commit is in the log when it returns, and the log reaches the
/// disk at checkpoints.
final class SQLiteCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is used by the checkpointing thread alone (and by `stop` once that
    // thread has ended); the flags are guarded by `condition`.

    /// SQLite's own threshold for its automatic checkpoint, in frames (pages) of the log.
    static let defaultThreshold = 1000

    /// The log's size, in frames, from which a commit asks for a checkpoint.
    let threshold: Int
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

    /// A checkpointer with its own connection to the store at `path`; its thread, named `name`,
    /// starts now, with the scheduling policy of the thread that opens the store (a thread started
    /// later by a commit's report would inherit the committing thread's, maybe `SCHED_IDLE`).
    init(
        path: String, threshold: Int = SQLiteCheckpointer.defaultThreshold, name: String = "appshell-checkpt"
    )
        throws(StoreError)
    {
        connection = try SQLiteConnection(path: path)
        // A connection opens the log at its first read; until then a checkpoint on it does nothing
        // and says so with success.
        _ = try connection.query("SELECT count(*) FROM sqlite_schema") { $0.int64(at: 0) }
        self.threshold = max(1, threshold)
        running = true
        let thread = BackgroundThread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Called on the committing thread after each commit with the frames in the log: past the
    /// threshold, wakes the checkpointing thread. Never waits for a checkpoint.
    func committed(frames: Int) {
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
            while !requested && !stopping { condition.wait() }
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
            do {
                let pass = try connection.checkpointPassively()
                unfinished = pass.copied < pass.frames
            } catch {
                // The log stays as it is (a full disk, say) and the next commit past the threshold
                // asks again; the writer's own commits report what is wrong with the store.
                failures.add(1, ordering: .relaxed)
            }
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
