import AppShellConcurrency
import AppShellHTTP
import AppShellSessions

/// The open event streams of each live app (`ShellSession.channel`): state changes and
/// notifications are sent to every page a session has open.
///
/// Each stream is remembered with the session id it was opened with: when the id rotates (login,
/// logout), the streams of the old id are ended, so nothing the session shows afterwards reaches
/// whoever held the old id. A session has at most `maxStreamsPerSession` streams.
///
/// Streams are held weakly: a stream whose response was never sent (the request failed after the
/// handler made it) is let go with the response, and does not stay subscribed.
public final class ShellEvents: Sendable {
    /// How many streams one session may have open by default.
    public static let defaultMaxStreamsPerSession = 8

    /// How many streams one session may have open: one per tab or window showing it. A further
    /// one is refused (429) rather than ending the oldest, which would have two tabs over the cap
    /// end each other's streams in turn, each reconnecting.
    public let maxStreamsPerSession: Int

    private struct Subscriber: Sendable {
        weak var stream: EventStream?
        let key: ObjectIdentifier
        /// The session id the stream was opened with.
        let sessionID: SessionID

        var isLive: Bool { stream?.isOpen ?? false }
    }

    private let channels = Locked<[String: [Subscriber]]>([:])

    /// An empty hub that allows `maxStreamsPerSession` streams per session.
    public init(maxStreamsPerSession: Int = ShellEvents.defaultMaxStreamsPerSession) {
        self.maxStreamsPerSession = maxStreamsPerSession
    }

    /// The number of open streams.
    public var count: Int {
        channels.withLock { $0.values.reduce(0) { $0 + $1.filter(\.isLive).count } }
    }

    /// Whether `channel` has a page listening.
    func hasListeners(_ channel: String) -> Bool {
        channels.withLock { $0[channel]?.contains(where: \.isLive) ?? false }
    }

    /// Whether `channel` may have one stream more.
    func hasRoom(_ channel: String) -> Bool {
        channels.withLock { channels in
            channels[channel]?.removeAll { !$0.isLive }
            return (channels[channel]?.count ?? 0) < maxStreamsPerSession
        }
    }

    /// Sends `channel`'s events to `stream`, opened with `sessionID`, until it closes.
    func subscribe(_ stream: EventStream, to channel: String, openedWith sessionID: SessionID) {
        let key = ObjectIdentifier(stream)
        channels.withLock {
            $0[channel, default: []].append(Subscriber(stream: stream, key: key, sessionID: sessionID))
        }
        // The handler holds the key, not the stream: a stream never sent can be freed.
        stream.onClose { [weak self] in self?.remove(key, from: channel) }
    }

    private func remove(_ key: ObjectIdentifier, from channel: String) {
        channels.withLock { channels in
            channels[channel]?.removeAll { $0.key == key || $0.stream == nil }
            if channels[channel]?.isEmpty == true { channels[channel] = nil }
        }
    }

    /// Ends the streams of `channel` opened with any id but `current` (after a rotation: the
    /// holders of the old id must see nothing more).
    func endStreams(of channel: String, notOpenedWith current: SessionID) {
        let ended = channels.withLock { channels -> [EventStream] in
            guard let subscribers = channels[channel] else { return [] }
            let (kept, gone) = (
                subscribers.filter { $0.sessionID == current }, subscribers.filter { $0.sessionID != current }
            )
            channels[channel] = kept.isEmpty ? nil : kept
            return gone.compactMap(\.stream)
        }
        for stream in ended { stream.close() }
    }

    /// Ends every stream of `channel` (its app was dropped; the pages reconnect to the new one).
    func endStreams(of channel: String) {
        let ended = channels.withLock { $0.removeValue(forKey: channel) ?? [] }
        for stream in ended.compactMap(\.stream) { stream.close() }
    }

    /// Sends one event to every stream of `channel`.
    func publish(_ channel: String, event: String, id: String? = nil, data: String) {
        let streams = channels.withLock { $0[channel]?.compactMap(\.stream) ?? [] }
        for stream in streams { stream.send(event: event, id: id, data: data) }
    }
}
