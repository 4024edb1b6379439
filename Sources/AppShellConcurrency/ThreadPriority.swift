import Glibc

/// How the kernel schedules a thread that does slow work beside the server's event loops (a
/// password check) when both want the same core: as an equal, for a bounded share, behind them, or
/// only when they leave the core idle.
///
/// Linux schedules threads, not processes, so a thread can lower its own priority without
/// touching the others. Lowering needs no privilege (a larger nice value, `SCHED_IDLE`) and
/// Docker's and Podman's default seccomp profiles allow the calls. A thread cannot raise itself
/// back without privilege: a priority is chosen for a thread's whole life.
public enum ThreadPriority: String, Sendable, CaseIterable {
    /// As the threads that created it: shares a core equally with an event loop.
    case normal
    /// A bounded share of a busy core (`CoreShare`): the nice value whose weight gives that share
    /// beside one event loop at nice 0 (nice 6, about 21 %, for the default 20 %), so that slow
    /// work gets through at a known rate while the event loop keeps the rest.
    case share
    /// Nice 19 (`SCHED_OTHER`): the kernel gives it about 1.4 % of a core that an event loop keeps
    /// busy, and all of an idle one.
    case low
    /// `SCHED_IDLE`: it runs when the core would otherwise be idle (the kernel still gives it
    /// about 0.3 % of a busy core, so it never starves entirely); an event loop that wakes up
    /// takes the core from it at once.
    case idle

    /// The largest nice value.
    static let lowestNice: Int32 = 19

    /// Applies the priority to the calling thread (`share` as `CoreShare()`). Returns false (the
    /// thread keeps its priority) when the kernel refuses, with `errno` set; `normal` changes
    /// nothing.
    @discardableResult
    public func applyToCurrentThread() -> Bool {
        apply(share: CoreShare()) == 0
    }

    /// Applies the priority to the calling thread, `share` at `share`'s nice value. Returns 0, or
    /// the `errno` of the kernel's refusal (the thread keeps its priority).
    public func apply(share: CoreShare) -> Int32 {
        switch self {
        case .normal:
            return 0
        case .share:
            return Self.setNice(share.nice)
        case .low:
            return Self.setNice(Self.lowestNice)
        case .idle:
            return ThreadScheduling.takePolicy(ThreadScheduling.idlePolicy)
        }
    }

    /// Linux keeps a nice value per thread: PRIO_PROCESS with id 0 is the calling thread.
    private static func setNice(_ nice: Int32) -> Int32 {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 ? 0 : errno
    }

    /// What the calling thread runs with now: `idle` under `SCHED_IDLE`, `low` at nice 19,
    /// `share` at nice 1–18, `normal` otherwise (for tests and diagnostics).
    public static var currentThread: ThreadPriority {
        if sched_getscheduler(0) == ThreadScheduling.idlePolicy { return .idle }
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        guard errno == 0, nice > 0 else { return .normal }
        return nice == lowestNice ? .low : .share
    }
}
