import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// The events of the instances sharing a store: what goes to the other instances through the
/// relay, and what comes from them. A session's channel is listened to while it has a stream here
/// (`subscribe`, `remove`), the users' channel always.
extension ShellEvents {
    /// Whether events also go to other instances (then every state change is published, pages
    /// open here or not).
    var relays: Bool { relay != nil }

    /// Starts taking the other instances' events (no-op without a relay); `scheduled` is told of
    /// each notification another instance scheduled, with its channel and the store key of the
    /// session it belongs to; `changed` of a state another instance committed for a channel with
    /// a page open here that does not have it yet, with the id of that page's session and the
    /// state's version (`announceState`); `released` of each message on `leaseChannel`
    /// (`DefaultsBackend.leaseChannel`: another instance asks this one to give a lease up).
    func startRelaying(
        leaseChannel: String? = nil,
        scheduled: @escaping @Sendable (ScheduledNotification, String, SessionStoreKey) -> Void,
        changed: @escaping @Sendable (String, SessionID, Int) -> Void = { _, _, _ in },
        userChanged: @escaping @Sendable (String) -> Void = { _ in },
        released: @escaping @Sendable ([UInt8]) -> Void = { _ in }
    ) {
        ledger?.start()
        // Every instance hears the users' changes and its leases' channel; a session's channel,
        // while it has a stream here.
        relay?.listen(to: Self.usersChannel)
        if let leaseChannel { relay?.listen(to: leaseChannel) }
        relay?.start { [weak self] channel, message in
            if channel == leaseChannel { return released(message) }
            self?.received(message, on: channel, scheduled: scheduled, changed: changed, userChanged: userChanged)
        } listening: { [weak self] channel in
            self?.caughtUp(channel, changed: changed)
        }
    }

    /// Stops the relay and the ledger, if there are (`leaseChannel` as `startRelaying` was given).
    func stopRelaying(leaseChannel: String? = nil) {
        if let leaseChannel { relay?.stopListening(to: leaseChannel) }
        relay?.stopListening(to: Self.usersChannel)
        relay?.stop()
        ledger?.stop()
    }

    /// The relay hears `channel` from now on: what another instance committed before (while this
    /// one subscribed, or lost its server) was not heard, so the streams' session is read again
    /// (`changed`, with the version after the oldest a stream has: no state is sent that a page has).
    private func caughtUp(_ channel: String, changed: (String, SessionID, Int) -> Void) {
        let behind = channels.withLock { channels -> (SessionID, Int)? in
            let live = channels[channel]?.subscribers.filter(\.isLive) ?? []
            guard let oldest = live.min(by: { ($0.lastVersion ?? -1) < ($1.lastVersion ?? -1) }) else { return nil }
            return (oldest.sessionID, (oldest.lastVersion ?? -1) + 1)
        }
        if let (id, version) = behind { changed(channel, id, version) }
    }

    /// Tells the other instances that `notification` was scheduled for the session `id` names
    /// (no-op without a relay): they deliver it if this instance does not (`Shell.startRelaying`).
    func announce(_ notification: ScheduledNotification, for id: SessionID, on channel: String) {
        relay?.send(Self.message("scheduled", id.storeKey.text, notification.json.serializedString), on: channel)
    }

    /// Tells the other instances sharing the store that `user`'s store changed: each renders the
    /// pages it holds open for the user again.
    func announceUserChange(_ user: String) {
        relay?.send(Self.message("user", user, ""), on: Self.usersChannel)
    }

    /// The relay channel of the users' changes.
    static let usersChannel = "users"

    /// Tells the other instances that `channel`'s state `id` (`<channel>.<version>`) is committed
    /// (no-op without a relay). The state itself does not cross the relay: it holds the page's
    /// HTML, and most states have no page open at another instance. One that has renders it from
    /// the store (`startRelaying`'s `changed`).
    func announceState(_ channel: String, id: String) {
        relay?.send(Self.message("changed", id, ""), on: channel)
    }

    /// An event as the relay carries it: kind, id and data, on lines of their own.
    static func message(_ kind: String, _ id: String, _ data: String) -> [UInt8] {
        Array("\(kind)\n\(id)\n\(data)".utf8)
    }

    /// Another instance's event: sent to the streams here (a rotation ends those of the old id,
    /// a notification it scheduled goes to `scheduled`).
    private func received(
        _ message: [UInt8], on channel: String, scheduled: (ScheduledNotification, String, SessionStoreKey) -> Void,
        changed: (String, SessionID, Int) -> Void, userChanged: (String) -> Void
    ) {
        let parts = message.split(separator: 10, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return }
        let kind = String(decoding: parts[0], as: UTF8.self)
        let id = String(decoding: parts[1], as: UTF8.self)
        switch kind {
        case "user" where channel == Self.usersChannel:
            userChanged(id)
        case "ended" where channel == Self.usersChannel:
            // Their sessions here find their records gone at their next request.
            let kept = SessionStoreKey(text: String(decoding: parts[2], as: UTF8.self))
            endStreams(ofUser: id, exceptStoreKey: kept, relaying: false)
        case "rotated":
            if let current = SessionStoreKey(text: id) { endStreamsHere(of: channel) { $0.storeKey != current } }
        case "changed":
            // A state event's id ends with its version (`Shell.eventID`).
            guard let version = id.split(separator: ".").last.flatMap({ Int($0) }) else { return }
            let behind = channels.withLock { channels in
                channels[channel]?.subscribers.first { $0.isLive && ($0.lastVersion ?? -1) < version }?.sessionID
            }
            if let behind { changed(channel, behind, version) }
        case "scheduled":
            if let owner = SessionStoreKey(text: id), let json = try? JSON(parsing: Array(parts[2])),
                let notification = ScheduledNotification(json: json)
            {
                scheduled(notification, channel, owner)
            }
        default:
            // A state event's id ends with its version (`Shell.eventID`).
            let version = kind == "state" ? id.split(separator: ".").last.flatMap { Int($0) } : nil
            publishHere(
                channel, event: kind, id: id.isEmpty ? nil : id, version: version,
                data: String(decoding: parts[2], as: UTF8.self))
        }
    }
}
