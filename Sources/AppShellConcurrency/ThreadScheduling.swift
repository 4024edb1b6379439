import CLinuxScheduling
import Glibc

/// What the kernel schedules the calling thread with: its policy, nice value and time slice, read
/// back with `sched_getattr` (for tests, and for the log line that says what a pool's threads run
/// with).
public struct ThreadScheduling: Sendable, Equatable {
    /// `SCHED_OTHER` (0), `SCHED_BATCH` (3), `SCHED_IDLE` (5), …
    public var policy: UInt32
    /// The nice value (-20–19).
    public var nice: Int32
    /// The time slice in nanoseconds (Linux 6.12 and later; 0 before).
    public var sliceNanoseconds: UInt64

    /// The calling thread's; `nil` when `sched_getattr` is refused.
    public static var current: ThreadScheduling? {
        var policy: UInt32 = 0
        var nice: Int32 = 0
        var slice: UInt64 = 0
        guard appshell_get_scheduling(&policy, &nice, &slice) == 0 else { return nil }
        return ThreadScheduling(policy: policy, nice: nice, sliceNanoseconds: slice)
    }

    /// Linux's `SCHED_BATCH` (Glibc's module leaves the GNU extensions out).
    public static let batchPolicy: Int32 = 3
    /// Linux's `SCHED_IDLE`.
    public static let idlePolicy: Int32 = 5

    /// Moves the calling thread (pid 0) to `policy` (`SCHED_BATCH` or `SCHED_IDLE`, which take
    /// priority 0; its nice value is kept). Lowering one's own policy needs no privilege. Returns 0,
    /// or the `errno` of the kernel's refusal (the thread keeps its policy).
    public static func takePolicy(_ policy: Int32) -> Int32 {
        var parameters = sched_param()
        parameters.sched_priority = 0
        return sched_setscheduler(0, policy, &parameters) == 0 ? 0 : errno
    }

    /// Gives the calling thread the shortest slice, 0.1 ms, at its nice value, so that its
    /// wake-ups preempt a running thread at once (Linux 6.12 and later). Returns whether the
    /// kernel keeps it (read back: an older kernel accepts the call and ignores the slice).
    public static func takeShortestSlice() -> Bool {
        let slice: UInt64 = 100_000
        guard let now = current, now.policy == 0,
            appshell_set_fair_scheduling(now.nice, slice) == 0
        else { return false }
        return current?.sliceNanoseconds == slice
    }
}
