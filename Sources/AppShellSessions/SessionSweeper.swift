import AppShellConcurrency
import Dispatch

/// A background thread that sweeps expired sessions at an interval until stopped.
final class SessionSweeper: Sendable {
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(registry: SessionRegistry, interval: Int) {
        let wakeUp = self.wakeUp
        let stopped = self.stopped
        let thread = BackgroundThread {
            while wakeUp.wait(timeout: .now() + .seconds(interval)) == .timedOut {
                do {
                    try registry.sweep()
                } catch {
                    StandardError.write("appshell: session sweep failed: \(error)\n")
                }
            }
            stopped.signal()
        }
        thread.name = "appshell-session-sweeper"
        thread.start()
    }

    /// Wakes the thread and waits for it to finish its current sweep.
    func stop() {
        wakeUp.signal()
        stopped.wait()
    }
}
