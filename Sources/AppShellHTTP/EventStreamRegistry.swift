import AppShellConcurrency
import Foundation

/// The server's open event streams: a heartbeat for each every interval, and all closed at shutdown
/// (libmicrohttpd must not be stopped with a connection still suspended).
final class EventStreamRegistry: Sendable {
    private let streams = Locked<[ObjectIdentifier: EventStream]>([:])
    private let stopping = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let running = Locked(false)

    /// Streams open now.
    var count: Int { streams.withLock { $0.count } }

    /// Tracks `stream` until it ends.
    func add(_ stream: EventStream) {
        let key = ObjectIdentifier(stream)
        streams.withLock { $0[key] = stream }
        stream.onClose { [weak self] in _ = self?.streams.withLock { $0.removeValue(forKey: key) } }
    }

    /// Sends a heartbeat comment on every stream every `seconds`, on a thread of its own.
    func startHeartbeat(every seconds: Int) {
        guard seconds > 0 else { return }
        let first = running.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        guard first else { return }
        let thread = Thread { [self] in
            while stopping.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
                for stream in streams.withLock({ Array($0.values) }) { stream.comment("heartbeat") }
            }
            stopped.signal()
        }
        thread.name = "appshell-heartbeat"
        thread.start()
    }

    /// Ends every stream and stops the heartbeat.
    func closeAll() {
        if running.withLock({ $0 }) {
            stopping.signal()
            stopped.wait()
            running.withLock { $0 = false }
        }
        for stream in streams.withLock({ Array($0.values) }) { stream.close() }
    }
}
