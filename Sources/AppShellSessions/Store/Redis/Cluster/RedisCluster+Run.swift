import AppShellConcurrency
import Glibc

extension RedisCluster {
    /// A command on its way: where it goes next, and what goes before it there.
    private struct Pending {
        /// Its place among the commands given.
        let index: Int
        /// The node it goes to (`nil`: the map's primary of its slot).
        var node: RedisClusterNode?
        /// Whether `ASKING` goes before it (the node named by `ASK`).
        var asking = false
        /// A script to load before it (the node answered `NOSCRIPT`).
        var load: [UInt8]?
    }

    /// Sends `commands` where their slots are served and follows the answers (see `RedisCluster`);
    /// `script` is the source of an `EVALSHA` among them, loaded on `NOSCRIPT`.
    func run(
        _ commands: [(key: [UInt8], arguments: [[UInt8]])], script: RedisScript?
    ) throws(StoreError)
        -> [RedisReply]
    {
        guard !commands.isEmpty else { return [] }
        // The common case — every key in one slot, or on one node, which answers — in one round
        // trip with no more than the commands' list made.
        let seen = map
        guard let node = seen.primary(ofSlot: RedisSlot.of(commands[0].key)),
            commands.dropFirst().allSatisfy({ seen.primary(ofSlot: RedisSlot.of($0.key)) === node })
        else {
            return try route(
                commands, script: script, replies: [], pending: commands.indices.map { Pending(index: $0) })
        }
        let replies: [RedisReply]
        do {
            replies = try node.pipeline(commands.map(\.arguments))
        } catch {
            guard case .unreachable = error else { throw error.storeError }
            return try route(
                commands, script: script, replies: [], pending: commands.indices.map { Pending(index: $0) })
        }
        guard replies.contains(where: RedisCluster.isRedirection) else { return replies }
        // Those redirected did not run; the others did, and keep their replies.
        var pending: [Pending] = []
        var moved = false
        for index in replies.indices {
            guard case .error(let message) = replies[index] else { continue }
            switch try redirection(message, command: commands[index].arguments, script: script) {
            case .none: break
            case .moved(let target):
                moved = true
                pending.append(Pending(index: index, node: target))
            case .ask(let target): pending.append(Pending(index: index, node: target, asking: true))
            case .load(let source): pending.append(Pending(index: index, node: node, load: source))
            case .retry: pending.append(Pending(index: index))
            }
        }
        if moved { try? refresh(after: seen) }
        return try route(commands, script: script, replies: replies, pending: pending)
    }

    /// Whether `reply` is one the client acts on rather than returns (the command did not run).
    private static func isRedirection(_ reply: RedisReply) -> Bool {
        guard case .error(let message) = reply else { return false }
        return message.hasPrefix("MOVED ") || message.hasPrefix("ASK ") || message.hasPrefix("NOSCRIPT")
            || message.hasPrefix("CLUSTERDOWN") || message.hasPrefix("TRYAGAIN")
    }

    /// `run` in general, for the commands of `pending` (`replies` holds the others' when not
    /// empty): grouped by node, redirections followed, unreachable nodes retried.
    private func route(
        _ commands: [(key: [UInt8], arguments: [[UInt8]])], script: RedisScript?, replies: [RedisReply],
        pending: [Pending]
    ) throws(StoreError) -> [RedisReply] {
        var replies = replies.isEmpty ? [RedisReply](repeating: .null, count: commands.count) : replies
        var slots: [Int] = []
        slots.reserveCapacity(commands.count)
        for command in commands { slots.append(RedisSlot.of(command.key)) }
        var pending = pending
        var redirections = 0
        var deadline: Int64?
        while !pending.isEmpty {
            let seen = map
            // Why commands wait: their node cannot be reached, or the cluster cannot serve them now.
            var unreachable: StoreError?
            var moved = false
            var next: [Pending] = []
            // Groups in the order of their first command; each keeps the commands' order.
            var groups: [(node: RedisClusterNode, items: [Pending])] = []
            for var item in pending {
                guard let node = item.node ?? seen.primary(ofSlot: slots[item.index]) else {
                    unreachable = StoreError("store \(url): no node serves slot \(slots[item.index])")
                    next.append(item)
                    continue
                }
                item.node = node
                if let group = groups.firstIndex(where: { $0.node === node }) {
                    groups[group].items.append(item)
                } else {
                    groups.append((node, [item]))
                }
            }
            var work: [(node: RedisClusterNode, commands: [[[UInt8]]])] = []
            work.reserveCapacity(groups.count)
            for (node, items) in groups {
                var sent: [[[UInt8]]] = []
                sent.reserveCapacity(items.count)
                for item in items {
                    if item.asking { sent.append([Array("ASKING".utf8)]) }
                    if let load = item.load { sent.append([Array("SCRIPT".utf8), Array("LOAD".utf8), load]) }
                    sent.append(commands[item.index].arguments)
                }
                work.append((node, sent))
            }
            // Several nodes at once: all sent before any reply is read.
            let results =
                work.count == 1
                ? [Result { () throws(RedisClusterNode.Failure) in try work[0].node.pipeline(work[0].commands) }]
                : RedisClusterNode.pipelines(work)
            for ((node, items), result) in zip(groups, results) {
                let answers: [RedisReply]
                do {
                    answers = try result.get()
                } catch {
                    switch error {
                    case .unreachable(let error):
                        unreachable = error
                        for var item in items {
                            (item.node, item.asking) = (nil, false)
                            next.append(item)
                        }
                        continue
                    case .broken(let error):
                        throw error
                    }
                }
                var position = 0
                for item in items {
                    position += (item.asking ? 1 : 0) + (item.load != nil ? 1 : 0)
                    let reply = answers[position]
                    position += 1
                    guard case .error(let message) = reply else {
                        replies[item.index] = reply
                        continue
                    }
                    switch try redirection(message, command: commands[item.index].arguments, script: script) {
                    case .none:
                        replies[item.index] = reply
                    case .moved(let target):
                        moved = true
                        next.append(Pending(index: item.index, node: target))
                    case .ask(let target):
                        next.append(Pending(index: item.index, node: target, asking: true))
                    case .load(let source):
                        next.append(Pending(index: item.index, node: node, asking: item.asking, load: source))
                    case .retry(let error):
                        unreachable = error
                        next.append(Pending(index: item.index))
                    }
                }
            }
            if moved { try? refresh(after: seen) }
            pending = next
            guard !pending.isEmpty else { break }
            if let unreachable {
                // Only the unreachable ones wait: give the cluster a moment, ask for the map again.
                let now = TimerQueue.monotonicClock()
                let end = deadline ?? now + Int64(retryMilliseconds)
                deadline = end
                guard now < end else { throw unreachable }
                usleep(UInt32(min(100, end - now) * 1_000))
                try? refresh(after: seen, minimumAge: 100)
            } else {
                redirections += 1
                guard redirections <= maximumRedirections else {
                    throw StoreError("store \(url): more than \(maximumRedirections) redirections")
                }
            }
        }
        return replies
    }

    /// What an error reply asks of the client.
    private enum Redirection {
        /// Nothing: it is the command's reply.
        case none
        /// The slot moved for good to the node.
        case moved(RedisClusterNode)
        /// The key is on the node, during a migration.
        case ask(RedisClusterNode)
        /// The node does not know the script: load this source.
        case load([UInt8])
        /// The cluster cannot serve the command now (`CLUSTERDOWN`, `TRYAGAIN`): it did not run,
        /// and is tried again until the retry deadline.
        case retry(StoreError)
    }

    /// What `message`, the answer to `command`, asks; throws for a redirection not understood.
    private func redirection(
        _ message: String, command: [[UInt8]], script: RedisScript?
    ) throws(StoreError)
        -> Redirection
    {
        let word = message.prefix(while: { $0 != " " })
        switch word {
        case "MOVED", "ASK":
            // MOVED <slot> <host>:<port>
            let parts = message.split(separator: " ")
            guard parts.count == 3, let node = node(named: String(parts[2])) else {
                throw StoreError("store \(url): a redirection not understood: \(message)")
            }
            return word == "MOVED" ? .moved(node) : .ask(node)
        case "NOSCRIPT":
            guard command.count > 1 else { return .none }
            if let script, command[1] == script.sha { return .load(script.text) }
            return scriptTexts[command[1]].map { .load($0) } ?? .none
        case "CLUSTERDOWN", "TRYAGAIN":
            return .retry(StoreError("store \(url): \(message)"))
        default:
            return .none
        }
    }
}
