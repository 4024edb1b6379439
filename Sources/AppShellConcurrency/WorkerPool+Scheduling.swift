import Glibc

extension WorkerPool {
    /// What the pool's threads run with, found by applying the pool's priority to a short-lived
    /// thread of the same process (the same kernel, privileges and seccomp profile), for the log
    /// line at start: the priority, and for `share` its nice value, share and slice, or what the
    /// kernel refused and what the threads run with instead.
    public func schedulingDescription() -> String {
        let result = Locked<String?>(nil)
        let done = Condition()
        // What the rescheduler's thread gets (it starts from the thread that made the pool).
        let shortSlice = priority == .share && share.sliceMicroseconds > 0 ? Self.probeShortSlice() : false
        let thread = BackgroundThread { [priority, share] in
            let error = priority.apply(share: share)
            let text = Self.describe(priority, share: share, error: error, shortSlice: shortSlice)
            done.lock()
            result.withLock { $0 = text }
            done.signal()
            done.unlock()
        }
        thread.name = "\(name)-probe"
        done.lock()
        thread.start()
        while result.withLock({ $0 }) == nil { done.wait() }
        done.unlock()
        return result.withLock { $0 } ?? ""
    }

    /// Whether a thread of this process may take the shortest slice: probed on a thread of its
    /// own (a slice, once taken, stays the thread's).
    private static func probeShortSlice() -> Bool {
        let kept = Locked<Bool?>(nil)
        let done = Condition()
        let thread = BackgroundThread {
            let value = ThreadScheduling.takeShortestSlice()
            done.lock()
            kept.withLock { $0 = value }
            done.signal()
            done.unlock()
        }
        done.lock()
        thread.start()
        while kept.withLock({ $0 }) == nil { done.wait() }
        done.unlock()
        return kept.withLock { $0 } ?? false
    }

    /// What a refusal (`error`, an `errno`) of `priority` leaves the threads with.
    static func refusal(_ priority: ThreadPriority, error: Int32) -> String {
        "keep the priority of the thread that made the pool (\(priority.rawValue) refused: \(String(cString: strerror(error))))"
    }

    /// The log line's text for `priority` applied with `error` (0: applied, else the `errno` of
    /// the kernel's refusal), and for `share` whether the rescheduler's shortest slice is kept
    /// (`shortSlice`).
    public static func describe(_ priority: ThreadPriority, share: CoreShare, error: Int32, shortSlice: Bool) -> String
    {
        if error != 0 { return refusal(priority, error: error) }
        switch priority {
        case .normal: return "normal priority (an equal share of a core with each server thread)"
        case .low: return "nice 19 (about 1.4 % of a core a server thread keeps busy)"
        case .idle: return "SCHED_IDLE (time the server's threads leave idle; about 0.3 % of a busy core)"
        case .share:
            let base = "nice \(share.nice) (about \(share.effectivePercent) % of a core a server thread keeps busy)"
            guard share.sliceMicroseconds > 0 else { return base + " in the kernel's slices (up to a 4 ms tick)" }
            let slices = "in slices of about \(share.sliceMicroseconds) µs"
            return shortSlice
                ? "\(base) \(slices)"
                : "\(base) \(slices), less promptly: the rescheduling tick keeps the kernel's own slice "
                    + "(a 0.1 ms slice needs Linux 6.12 or later)"
        }
    }
}
