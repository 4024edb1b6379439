import AppShellConcurrency

/// Sweeps expired sessions at an interval on a `TimerQueue`: the server's shared one, or a queue of
/// its own.
final class SessionSweeper: Sendable {
    private let timers: TimerQueue
    private let timer: TimerQueue.Timer
    private let ownsTimers: Bool

    /// Sweeps `registry` every `interval` seconds (at least 1), the first time one interval from
    /// now, on `timers`, or on a queue of its own started now when it is `nil`.
    init(registry: SessionRegistry, interval: Int, timers shared: TimerQueue? = nil) {
        let timers = shared ?? TimerQueue(name: "appshell-session-sweeper")
        self.timers = timers
        ownsTimers = shared == nil
        timer = timers.schedule(every: Int64(max(1, interval)) * 1000) { [weak registry] in
            do {
                try registry?.sweep()
            } catch {
                Logger.appshell.error("session sweep failed: \(error)")
            }
        }
        if ownsTimers { timers.start() }
    }

    /// Stops sweeping, waiting for a sweep that is running to finish.
    func stop() {
        timers.cancel(timer)
        if ownsTimers { timers.stop() }
    }
}
