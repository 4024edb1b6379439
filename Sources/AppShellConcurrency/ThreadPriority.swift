import Glibc

/// How the kernel schedules a thread that does slow work beside the server's event loops (a
/// password check) when both want the same core: as an equal, behind them, or only when they
/// leave the core idle.
///
/// Linux schedules threads, not processes, so a thread can lower its own priority without
/// touching the others. Lowering needs no privilege (`setpriority` to a larger nice value and
/// `sched_setscheduler` to `SCHED_IDLE` are allowed to every user) and Docker's and Podman's
/// default seccomp profiles allow both calls. A thread cannot raise itself back without
/// privilege: a priority is chosen for a thread's whole life.
public enum ThreadPriority: String, Sendable, CaseIterable {
    /// As the threads that created it: shares a core equally with an event loop.
    case normal
    /// Nice 19 (`SCHED_OTHER`): the kernel gives it about 1.5 % of a core that an event loop keeps
    /// busy, and all of an idle one.
    case low
    /// `SCHED_IDLE`: it runs when the core would otherwise be idle (the kernel still gives it
    /// about 0.3 % of a busy core, so it never starves entirely); an event loop that wakes up
    /// takes the core from it at once.
    case idle

    /// Linux's `SCHED_IDLE` (Glibc's module leaves the GNU extension out).
    private static let schedulingPolicyIdle: Int32 = 5
    /// The largest nice value.
    private static let lowestNice: Int32 = 19

    /// Applies the priority to the calling thread. Returns false (the thread keeps its priority)
    /// when the kernel refuses, with `errno` set; `normal` changes nothing.
    @discardableResult
    public func applyToCurrentThread() -> Bool {
        switch self {
        case .normal:
            return true
        case .low:
            // Linux keeps a nice value per thread: PRIO_PROCESS with id 0 is the calling thread.
            return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.lowestNice) == 0
        case .idle:
            // pid 0 is the calling thread; SCHED_IDLE takes priority 0.
            var parameters = sched_param()
            parameters.sched_priority = 0
            return sched_setscheduler(0, Self.schedulingPolicyIdle, &parameters) == 0
        }
    }

    /// What the calling thread runs with now: `idle` under `SCHED_IDLE`, `low` at nice 19,
    /// `normal` otherwise (for tests and diagnostics).
    public static var currentThread: ThreadPriority {
        if sched_getscheduler(0) == schedulingPolicyIdle { return .idle }
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return errno == 0 && nice == lowestNice ? .low : .normal
    }
}
