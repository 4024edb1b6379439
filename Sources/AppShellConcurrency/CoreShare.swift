import Glibc

/// The share of a busy core that a `ThreadPriority.share` thread gets beside one event loop at
/// nice 0, and the longest it keeps the core from a waiting event loop.
///
/// Linux's fair scheduler (EEVDF since 6.6) divides a core between runnable threads by weight:
/// 1024 at nice 0, about 1.25 times less per nice step, down to 15 at nice 19. A thread at nice
/// `n` beside one thread at nice 0 gets `weight(n) / (1024 + weight(n))` of the core: 50 % at
/// nice 0, 25 % at nice 5, 10 % at nice 10, 1.4 % at nice 19; the share asked for becomes the
/// nice value that comes nearest.
///
/// The kernel decides who runs when a thread wakes up, blocks, or at its tick (every 4 ms at
/// 250 Hz): a busy event loop that lost the core to the thread gets it back at a tick at the
/// earliest, however short the thread's turn was meant to be. `WorkerPool` adds a rescheduling
/// tick of `sliceMicroseconds` while a job runs (`WorkerPool.Rescheduler`), so the thread runs
/// in slices of about that length. (The thread's own `sched_attr` slice does not do this: a
/// shorter one gives it earlier deadlines, which makes the kernel prefer it; measured, it made
/// the reads' p99 worse.)
public struct CoreShare: Sendable, Equatable {
    /// Percent of a busy core, 1–50.
    public var percent: Int
    /// The slice in microseconds: 0 for the kernel's tick, else 100–100 000.
    public var sliceMicroseconds: Int

    /// The valid shares.
    public static let percents = 1...50
    /// The valid slices besides 0.
    public static let sliceMicrosecondsRange = 100...100_000

    /// The kernel's weights of nice 0 to 19 (`sched_prio_to_weight`).
    static let weights: [Int] = [
        1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ]

    /// A share of `percent` (clamped to 1–50) in slices of `sliceMicroseconds` (0, or clamped to
    /// 100–100 000).
    public init(percent: Int = 20, sliceMicroseconds: Int = 1000) {
        self.percent = min(max(percent, Self.percents.lowerBound), Self.percents.upperBound)
        let range = Self.sliceMicrosecondsRange
        self.sliceMicroseconds =
            sliceMicroseconds <= 0 ? 0 : min(max(sliceMicroseconds, range.lowerBound), range.upperBound)
    }

    /// The nice value whose share beside one thread at nice 0 comes nearest to `percent`.
    public var nice: Int32 {
        let wanted = Double(percent) / 100
        let best = Self.weights.indices.min { a, b in
            abs(Self.share(ofWeight: Self.weights[a]) - wanted) < abs(Self.share(ofWeight: Self.weights[b]) - wanted)
        }
        return Int32(best ?? 0)
    }

    /// The share the nice value gives beside one busy thread at nice 0, in percent (one decimal).
    public var effectivePercent: Double {
        (Self.share(ofWeight: Self.weights[Int(nice)]) * 1000).rounded() / 10
    }

    private static func share(ofWeight weight: Int) -> Double { Double(weight) / Double(1024 + weight) }
}
