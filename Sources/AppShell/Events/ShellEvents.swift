import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Synchronization

/// How many streams an app has subscribed, readable without `ShellEvents`' lock (a request asks
/// it on the hot path: does anyone listen?).
final class StreamCount: Sendable {
    let value = Atomic<Int>(0)

    /// Whether a stream is subscribed (or was, and is not yet known to be gone).
    var isPositive: Bool { value.load(ordering: .relaxed) > 0 }
}

/// The open event streams of each session's app (`LiveApp.channel`): state changes and
/// notifications are sent to every page a session has open.
///
/// A channel outlives the app object that publishes on it: it is kept in the session's snapshot,
/// so an app rebuilt from it (the session left memory and came back, or the server restarted with
/// a store that keeps sessions) publishes where the pages already listen.
///
/// Each stream is remembered with the session id it was opened with: when the id rotates (login,
/// logout), the streams of the old id are ended, so nothing the session shows afterwards reaches
/// whoever held the old id. A session has at most `maxStreamsPerSession` streams.
///
/// Streams are held weakly: a stream whose response was never sent (the request failed after the
/// handler made it) is let go with the response, and does not stay subscribed.
package final class ShellEvents: Sendable {
    /// How many streams one session may have open by default.
    package static let defaultMaxStreamsPerSession = 8

    /// How many streams one session may have open: one per tab or window showing it. A further
    /// one is refused (429) rather than ending the oldest, which would have two tabs over the cap
    /// end each other's streams in turn, each reconnecting.
    package let maxStreamsPerSession: Int

    /// A stream of a channel here, and what it was opened with.
    struct Subscriber: Sendable {
        weak var stream: EventStream?
        let key: ObjectIdentifier
        /// The session id the stream was opened with.
        let sessionID: SessionID
        /// The account the stream's session was logged in as when it opened.
        let user: String?
        /// The version of the last state event the stream got: the state it opened with, then
        /// each one sent (events come from other instances too, and an older one, or one it
        /// opened with, that comes late is not sent).
        var lastVersion: Int?

        var isLive: Bool { stream?.isOpen ?? false }
    }

    /// A channel's streams, and the count its live app reads (the same object for every app the
    /// session's snapshot rebuilds: see `streamCount(of:)`).
    struct Channel: Sendable {
        var subscribers: [Subscriber] = []
        let count: StreamCount
    }

    /// Each channel's streams here: a channel is listed (and listened to at the relay) from its
    /// first stream to its last.
    let channels = Locked<[String: Channel]>([:])
    /// The channels with a stream of each logged-in user here (user → channels): the pages a change
    /// of the user's store renders again. A channel stays listed until its last stream ends.
    private let usersChannels = Locked<[String: Set<String>]>([:])
    /// The other instances sharing the store, when there are: every event published here goes to
    /// the instances holding a page of its session, and theirs come here
    /// (`ShellEvents+Relay.swift`).
    let relay: (any StoreMessageRelay)?
    /// The streams each session has open at all the instances sharing the store, when there are
    /// several: the cap on a session's streams holds over all of them.
    let ledger: (any StreamLedger)?
    /// The last stream name given to the ledger.
    private let streamNames = Atomic<UInt64>(0)

    /// An empty hub that allows `maxStreamsPerSession` streams per session; with `relay`, the
    /// events of sessions shared with other instances go to and come from them, and with
    /// `ledger` the cap counts the streams open at the other instances too.
    package init(
        maxStreamsPerSession: Int = ShellEvents.defaultMaxStreamsPerSession, relay: (any StoreMessageRelay)? = nil,
        ledger: (any StreamLedger)? = nil
    ) {
        self.maxStreamsPerSession = maxStreamsPerSession
        self.relay = relay
        self.ledger = ledger
    }

    /// Whether a stream must get its place in the ledger shared with other instances before it
    /// is answered (`admit`).
    var sharesStreams: Bool { ledger != nil }

    /// Asks the ledger shared with the other instances for a place for `stream` of `channel`;
    /// `done` is told whether it got one (at once, yes, without a ledger). The place is given
    /// back when the stream ends.
    func admit(_ stream: EventStream, of channel: String, _ done: @escaping @Sendable (_ admitted: Bool) -> Void) {
        guard let ledger else { return done(true) }
        let name = String(streamNames.add(1, ordering: .relaxed).newValue)
        let isOpen: @Sendable () -> Bool = { [weak stream] in stream?.isOpen ?? false }
        ledger.admit(name, of: channel, limit: maxStreamsPerSession, isOpen: isOpen) { admitted in
            if admitted { stream.onClose { ledger.release(name, of: channel) } }
            done(admitted)
        }
    }

    /// Removes `stream` from `channel` (it was refused).
    func unsubscribe(_ stream: EventStream, from channel: String) {
        unsubscribe(ObjectIdentifier(stream), from: channel)
    }

    /// Removes the stream `key` names from `channel`, and any of its streams already freed.
    private func unsubscribe(_ key: ObjectIdentifier, from channel: String) {
        channels.withLock { _ = remove(from: &$0, channel) { $0.key == key || $0.stream == nil } }
    }

    /// The number of open streams.
    package var count: Int {
        channels.withLock { $0.values.reduce(0) { $0 + $1.subscribers.filter(\.isLive).count } }
    }

    /// Whether `channel` has a page listening.
    func hasListeners(_ channel: String) -> Bool {
        channels.withLock { $0[channel]?.subscribers.contains(where: \.isLive) ?? false }
    }

    /// Whether `channel` may have one stream more.
    func hasRoom(_ channel: String) -> Bool {
        channels.withLock { channels in
            remove(from: &channels, channel) { !$0.isLive }
            return (channels[channel]?.subscribers.count ?? 0) < maxStreamsPerSession
        }
    }

    /// The count of `channel`'s streams, when it has any: an app rebuilt from its session's
    /// snapshot (after the session left memory) counts the streams its predecessor's pages keep
    /// open.
    func streamCount(of channel: String) -> StreamCount? {
        channels.withLock { $0[channel]?.count }
    }

    /// Sends `channel`'s events to `stream`, opened with `sessionID`, until it closes; `count`
    /// counts the app's streams (the channel's own count when it has streams already). `version`
    /// is that of the state the stream has already (sent when it opened, or the one it resumed
    /// at): no state event of that version or older is sent to it.
    func subscribe(
        _ stream: EventStream, to channel: String, openedWith sessionID: SessionID, user: String? = nil,
        version: Int? = nil, count: StreamCount
    ) {
        let key = ObjectIdentifier(stream)
        channels.withLock {
            // The channel's first stream here: the relay hears it (its last, `remove`, stops it).
            // Under the lock, so that the relay is told in the order the channel came and went.
            if $0[channel] == nil { relay?.listen(to: channel) }
            var entry = $0[channel] ?? Channel(count: count)
            entry.count.value.add(1, ordering: .relaxed)
            entry.subscribers.append(
                Subscriber(stream: stream, key: key, sessionID: sessionID, user: user, lastVersion: version))
            $0[channel] = entry
        }
        if let user { usersChannels.withLock { _ = $0[user, default: []].insert(channel) } }
        // The handler holds the key, not the stream: a stream never sent can be freed.
        stream.onClose { [weak self] in self?.unsubscribe(key, from: channel) }
    }

    /// Removes the subscribers of `channel` that `leaves` picks, and counts them out; returns them.
    /// The channel's last stream here leaving, the relay no longer hears it. Every stream leaves
    /// through here (closed, refused, ended, or freed unsent: `subscribe`'s `onClose`).
    @discardableResult
    private func remove(
        from channels: inout [String: Channel], _ channel: String, where leaves: (Subscriber) -> Bool
    ) -> [Subscriber] {
        guard var entry = channels[channel] else { return [] }
        var kept: [Subscriber] = []
        var gone: [Subscriber] = []
        // One look at each: a stream may close meanwhile, and must land on exactly one side.
        for subscriber in entry.subscribers {
            if leaves(subscriber) { gone.append(subscriber) } else { kept.append(subscriber) }
        }
        guard !gone.isEmpty else { return [] }
        entry.count.value.subtract(gone.count, ordering: .relaxed)
        entry.subscribers = kept
        channels[channel] = kept.isEmpty ? nil : entry
        if kept.isEmpty { relay?.stopListening(to: channel) }
        return gone
    }

    /// Ends the streams of `channel` opened with any id but `current` (after a rotation: the
    /// holders of the old id must see nothing more).
    ///
    /// The other instances are told the new id's store key, never the id: the relay's messages
    /// cross Redis, where a subscriber or `MONITOR` would read an id (the new cookie) as it is.
    func endStreams(of channel: String, notOpenedWith current: SessionID) {
        endStreamsHere(of: channel) { $0 != current }
        relay?.send(Self.message("rotated", current.storeKey.text, ""), on: channel)
    }

    /// Ends the streams of `channel` whose session ids `ends` picks.
    func endStreamsHere(of channel: String, where ends: (SessionID) -> Bool) {
        let ended = channels.withLock { remove(from: &$0, channel) { ends($0.sessionID) } }
        for stream in ended.compactMap(\.stream) { stream.close() }
    }

    /// The id of a stream of `channel` open here whose session's store key is `key`: how the
    /// owner of a notification another instance announced is found (the announcement carries the
    /// store key, not the id). `nil` when no page of that session listens here.
    func sessionID(of channel: String, storeKey key: SessionStoreKey) -> SessionID? {
        channels.withLock { channels in
            channels[channel]?.subscribers.first(where: { $0.isLive && $0.sessionID.storeKey == key })?.sessionID
        }
    }

    /// Ends every stream of `channel` (its app was dropped; the pages reconnect to the new one).
    func endStreams(of channel: String) {
        let ended = channels.withLock { remove(from: &$0, channel) { _ in true } }
        for stream in ended.compactMap(\.stream) { stream.close() }
    }

    /// The session ids the open streams were opened with.
    func sessionIDs() -> Set<SessionID> {
        channels.withLock { channels in
            Set(channels.values.flatMap { $0.subscribers.filter(\.isLive).map(\.sessionID) })
        }
    }

    /// Ends the streams opened with any of `ids` (their sessions ended: they expired, or left
    /// memory holding nothing worth storing).
    func endStreams(openedWith ids: Set<SessionID>) {
        let ended = channels.withLock { channels in
            channels.keys.flatMap { remove(from: &channels, $0) { ids.contains($0.sessionID) } }
        }
        for stream in ended.compactMap(\.stream) { stream.close() }
    }

    /// Sends one event to every stream of `channel`, here and at the other instances; `version`
    /// is the state's version for a state event (whose id ends with it).
    /// The sessions here with a page open as `user` (one id per channel, its live stream's), but
    /// the one of `excluded`: the pages a change of the user's store renders again. Channels whose
    /// streams have all ended leave the list.
    func sessions(ofUser user: String, excluding excluded: String? = nil) -> [(channel: String, id: SessionID)] {
        guard let listed = usersChannels.withLock({ $0[user] }) else { return [] }
        var found: [(channel: String, id: SessionID)] = []
        var ended: [String] = []
        channels.withLock { channels in
            for channel in listed {
                let live = channels[channel]?.subscribers.first { $0.isLive && $0.user == user }
                if let live {
                    if channel != excluded { found.append((channel, live.sessionID)) }
                } else {
                    ended.append(channel)
                }
            }
        }
        if !ended.isEmpty {
            usersChannels.withLock { users in
                users[user]?.subtract(ended)
                if users[user]?.isEmpty == true { users[user] = nil }
            }
        }
        return found
    }

    /// Ends every stream here of a session logged in as `user`, but those of the session whose
    /// store key is `kept`, and tells the other instances to do the same (log out everywhere).
    func endStreams(ofUser user: String, exceptStoreKey kept: SessionStoreKey?, relaying: Bool = true) {
        let ended = channels.withLock { channels in
            channels.keys.flatMap { channel in
                remove(from: &channels, channel) { $0.user == user && $0.sessionID.storeKey != kept }
            }
        }
        for stream in ended.compactMap(\.stream) { stream.close() }
        if relaying { relay?.send(Self.message("ended", user, kept?.text ?? ""), on: Self.usersChannel) }
    }

    func publish(_ channel: String, event: String, id: String? = nil, version: Int? = nil, data: String) {
        publishHere(channel, event: event, id: id, version: version, data: data)
        relay?.send(Self.message(event, id ?? "", data), on: channel)
    }

    /// Sends one event to every stream of `channel` here; a state event no newer than one a
    /// stream has (events come from other instances too, and one may come late: after a newer
    /// one, or after the stream opened with its state) is not sent to that stream.
    func publishHere(_ channel: String, event: String, id: String?, version: Int?, data: String) {
        let streams = channels.withLock { channels -> [EventStream] in
            guard var entry = channels[channel] else { return [] }
            guard let version else { return entry.subscribers.compactMap(\.stream) }
            var streams: [EventStream] = []
            for index in entry.subscribers.indices {
                if let last = entry.subscribers[index].lastVersion, version <= last { continue }
                entry.subscribers[index].lastVersion = version
                if let stream = entry.subscribers[index].stream { streams.append(stream) }
            }
            channels[channel] = entry
            return streams
        }
        for stream in streams { stream.send(event: event, id: id, data: data) }
    }

}
