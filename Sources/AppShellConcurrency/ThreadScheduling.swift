import CLinuxScheduling
import Glibc

/// The calling thread's time slice, which Linux (6.12 and later) lets a thread choose with
/// `sched_setattr`: the rescheduler of a low-priority `WorkerPool` takes the shortest, so that its
/// wake-ups preempt whatever runs.
enum ThreadScheduling {
    /// The calling thread's time slice in nanoseconds (0 before Linux 6.12, or when
    /// `sched_getattr` is refused).
    static var sliceNanoseconds: UInt64 {
        var policy: UInt32 = 0
        var nice: Int32 = 0
        var slice: UInt64 = 0
        guard appshell_get_scheduling(&policy, &nice, &slice) == 0 else { return 0 }
        return slice
    }

    /// Gives the calling thread the shortest slice, 0.1 ms, at its policy (`SCHED_OTHER`) and
    /// nice value. Returns whether the kernel keeps it (read back: an older kernel accepts the
    /// call and ignores the slice).
    @discardableResult
    static func takeShortestSlice() -> Bool {
        let slice: UInt64 = 100_000
        var policy: UInt32 = 0
        var nice: Int32 = 0
        var current: UInt64 = 0
        guard appshell_get_scheduling(&policy, &nice, &current) == 0, policy == 0,
            appshell_set_fair_scheduling(nice, slice) == 0
        else { return false }
        return sliceNanoseconds == slice
    }
}
