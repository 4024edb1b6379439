import AppShellConcurrency
import Glibc

extension RedisSubscriber {
    /// The thread: subscribes what changed, waits for messages and changes, follows the cluster.
    func run(_ receive: @Sendable ([UInt8], [UInt8]) -> Void, subscribed: @Sendable ([UInt8]) -> Void) {
        // Every channel is checked after a failure or a move; only those that changed otherwise.
        var checkAll = false
        var retrying = false
        while true {
            // What to place, and whether it is wanted: read under the lock, which `subscribe`
            // takes too (no copy of the whole set but after a failure or a move).
            let (stopping, channels) = state.withLock { state in
                defer { state.changed.removeAll(keepingCapacity: true) }
                var channels = state.changed.map { ($0, state.wanted[$0] != nil) }
                if checkAll {
                    channels += state.wanted.keys.filter { !state.changed.contains($0) }.map { ($0, true) }
                }
                return (state.stopping, channels)
            }
            if stopping { break }
            let seen = source.map
            retrying = place(channels, map: seen)
            checkAll = retrying
            var descriptors = [pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
            let names = Array(links.keys)
            for name in names {
                descriptors.append(pollfd(fd: links[name]!.connection.descriptor, events: Int16(POLLIN), revents: 0))
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), retrying ? 200 : -1)
            if descriptors[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wake[0], &drained, drained.count) > 0 {}
            }
            var moved = retrying
            for (offset, name) in names.enumerated() where descriptors[offset + 1].revents != 0 {
                guard let link = links[name] else { continue }
                do {
                    for reply in try link.connection.receiveAvailable() {
                        moved = handle(reply, on: link, receive, subscribed) || moved
                    }
                } catch {
                    if !failing { Logger.appshell.error("\(source.label): \(error)") }
                    failing = true
                    drop(name)
                    moved = true
                }
            }
            if moved {
                source.refresh(after: seen)
                checkAll = true
            }
        }
        for name in Array(links.keys) { drop(name) }
    }

    /// Subscribes each of `channels` that is wanted on its node (by `map`, on a cluster), and
    /// unsubscribes it elsewhere; true when one could not be placed (no node serves it, or it
    /// cannot be reached): to be tried again. A node that cannot be reached is tried once a call,
    /// however many channels it serves.
    private func place(_ channels: [(channel: [UInt8], wanted: Bool)], map: RedisSlotMap?) -> Bool {
        var retry = false
        var commands: [String: [[[UInt8]]]] = [:]
        var unreachable: Set<String> = []
        for (channel, wanted) in channels {
            let owner = wanted ? source.node(of: channel, in: map) : nil
            for (name, link) in links where name != owner?.name && link.channels.contains(channel) {
                link.channels.remove(channel)
                commands[name, default: []].append([source.unsubscribeCommand, channel])
            }
            guard wanted else { continue }
            guard let owner else {
                retry = true
                continue
            }
            let link: Link
            if let known = links[owner.name] {
                link = known
            } else if unreachable.contains(owner.name) {
                retry = true
                continue
            } else {
                do {
                    link = Link(
                        try RedisConnection(
                            url: owner.url, timeoutMilliseconds: source.timeoutMilliseconds, waitsForever: true))
                    links[owner.name] = link
                } catch {
                    if !failing { Logger.appshell.error("\(source.label): \(error)") }
                    failing = true
                    unreachable.insert(owner.name)
                    retry = true
                    continue
                }
            }
            if link.channels.insert(channel).inserted {
                commands[owner.name, default: []].append([source.subscribeCommand, channel])
            }
        }
        for (name, sent) in commands {
            guard let link = links[name] else { continue }
            if link.channels.isEmpty {
                // Nothing left there: closing unsubscribes the rest.
                state.withLock { $0.confirmed.subtract(sent.map { $0[1] }) }
                drop(name)
                continue
            }
            do {
                try link.connection.sendWithoutWaiting(sent)
            } catch {
                drop(name)
                retry = true
            }
        }
        return retry
    }

    /// Handles a reply of `link`'s node; true when it says a slot moved.
    private func handle(
        _ reply: RedisReply, on link: Link, _ receive: @Sendable ([UInt8], [UInt8]) -> Void,
        _ subscribed: @Sendable ([UInt8]) -> Void
    ) -> Bool {
        switch reply {
        case .array(let parts) where parts.count == 3:
            guard let kind = parts[0].bytes, let channel = parts[1].bytes else { return false }
            switch kind {
            case source.messageKind:
                if let payload = parts[2].bytes { receive(channel, payload) }
            case source.subscribedKind:
                state.withLock { _ = $0.confirmed.insert(channel) }
                if failing { Logger.appshell.notice("\(source.label): receiving again") }
                failing = false
                subscribed(channel)
            case source.unsubscribedKind:
                state.withLock { _ = $0.confirmed.remove(channel) }
                // Not asked for: the node no longer serves the channel's slot.
                if link.channels.remove(channel) != nil {
                    state.withLock { _ = $0.changed.insert(channel) }
                    return true
                }
            default: break
            }
        case .error(let message):
            // MOVED <slot> <host>:<port>, to an SSUBSCRIBE sent where the map was out of date.
            let parts = message.split(separator: " ")
            guard parts.count == 3, parts[0] == "MOVED", let slot = Int(parts[1]) else {
                Logger.appshell.error("\(source.label): \(message)")
                return false
            }
            let lost = link.channels.filter { RedisSlot.of($0) == slot }
            link.channels.subtract(lost)
            state.withLock { $0.changed.formUnion(lost) }
            return true
        default: break
        }
        return false
    }

    /// Closes the link to `name`; its channels are no longer subscribed.
    private func drop(_ name: String) {
        guard let link = links.removeValue(forKey: name) else { return }
        link.connection.close()
        state.withLock { state in
            state.confirmed.subtract(link.channels)
            state.changed.formUnion(link.channels)
        }
    }
}
