import AppShellConcurrency
import AppShellHTTP

/// The open event streams of each live app (`ShellSession.channel`): state changes and
/// notifications are sent to every page a session has open.
public final class ShellEvents: Sendable {
    private let streams = Locked<[String: [EventStream]]>([:])

    /// An empty hub.
    public init() {}

    /// The number of open streams.
    public var count: Int { streams.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Whether `channel` has a page listening.
    func hasListeners(_ channel: String) -> Bool { streams.withLock { $0[channel]?.isEmpty == false } }

    /// Sends `channel`'s events to `stream` until it closes.
    func subscribe(_ stream: EventStream, to channel: String) {
        streams.withLock { $0[channel, default: []].append(stream) }
        stream.onClose { [weak self] in
            self?.streams.withLock { streams in
                streams[channel]?.removeAll { $0 === stream }
                if streams[channel]?.isEmpty == true { streams[channel] = nil }
            }
        }
    }

    /// Sends one event to every stream of `channel`.
    func publish(_ channel: String, event: String, id: String? = nil, data: String) {
        for stream in streams.withLock({ $0[channel] ?? [] }) { stream.send(event: event, id: id, data: data) }
    }
}
