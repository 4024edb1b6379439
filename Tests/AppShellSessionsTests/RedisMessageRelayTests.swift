import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The relay between instances sharing a Redis store: what one sends, the others receive in
/// order, and not itself, on the channels they listen to only; it comes back by itself after
/// Redis restarts.
@Suite(.serialized) struct RedisMessageRelayTests {
    /// A subscriber connected and subscribed to `probe`: a message sent now arrives.
    static func waitUntilSubscribed(_ sender: RedisMessageRelay, _ inbox: RelayInbox) {
        for attempt in 0..<200 {
            sender.send(Array("probe \(attempt)".utf8), on: "probe")
            if !inbox.wait(for: 1, seconds: 0.05).isEmpty { break }
        }
        inbox.messages.withLock { $0.removeAll() }
    }

    /// How many clients `url`'s server has subscribed to each of `channels` (`PUBSUB NUMSUB`).
    static func subscribers(_ url: RedisURL, _ channels: [String]) throws -> [Int64] {
        let connection = try RedisConnection(url: url)
        defer { connection.close() }
        let reply = try connection.command(
            [Array("PUBSUB".utf8), Array("NUMSUB".utf8)] + channels.map { Array($0.utf8) })
        guard case .array(let parts) = reply else { return [] }
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0].integer ?? -1 }
    }

    @Test func othersReceiveInOrderAndTheSenderDoesNot() throws {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        let first = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let second = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let other = RedisMessageRelay(url: server.url, keyPrefix: RedisTestServer.uniquePrefix())
        let channels = ["probe", "channel.0", "channel.1", "channel.2"]
        for relay in [first, second, other] {
            for channel in channels { relay.listen(to: channel) }
        }
        let firstInbox = RelayInbox.started(first)
        let secondInbox = RelayInbox.started(second)
        let otherInbox = RelayInbox.started(other)
        defer {
            first.stop()
            second.stop()
            other.stop()
        }
        #expect(
            eventually { channels.allSatisfy { first.isListening(to: $0) && other.isListening(to: $0) } })
        Self.waitUntilSubscribed(first, secondInbox)
        firstInbox.messages.withLock { $0.removeAll() }
        for number in 0..<100 { first.send(Array("message \(number)".utf8), on: "channel.\(number % 3)") }
        let received = secondInbox.wait(for: 100)
        #expect(received.map(\.1) == (0..<100).map { "message \($0)" })
        #expect(received.map(\.0) == (0..<100).map { "channel.\($0 % 3)" })
        // Not the sender itself, nor a store with another prefix: a message the sender sends
        // after, on a channel they hear, comes first.
        second.send(Array("marker".utf8), on: "probe")
        #expect(firstInbox.wait(for: 1).map(\.1) == ["marker"])
        #expect(otherInbox.messages.withLock { $0.isEmpty })
    }

    /// A channel is received from its first `listen` to the `stopListening` that balances them;
    /// Redis sends nothing of it to the relay otherwise.
    @Test func aChannelIsReceivedOnlyWhileListenedTo() throws {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        let sender = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let receiver = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let confirmed = Locked<[String]>([])
        _ = RelayInbox.started(sender)
        let inbox = RelayInbox.started(receiver, listening: confirmed)
        defer {
            sender.stop()
            receiver.stop()
        }
        let redisName = { (channel: String) in prefix + "events:" + channel }
        receiver.listen(to: "marker")
        receiver.listen(to: "session")
        receiver.listen(to: "session")
        #expect(eventually { receiver.isListening(to: "session") && receiver.isListening(to: "marker") })
        // Redis's confirmations come on the subscriber's thread, maybe after `isListening` says so.
        #expect(eventually { confirmed.withLock { Set($0) } == ["marker", "session"] })
        #expect(try Self.subscribers(server.url, [redisName("session")]) == [1])
        sender.send(Array("heard".utf8), on: "session")
        #expect(inbox.wait(for: 1).map(\.1) == ["heard"])
        // One stop of two: still listened to.
        receiver.stopListening(to: "session")
        #expect(receiver.listeners(of: "session") == 1)
        sender.send(Array("still heard".utf8), on: "session")
        #expect(inbox.wait(for: 2).map(\.1) == ["heard", "still heard"])
        // The last: Redis no longer sends it here (the marker, sent after, comes alone).
        receiver.stopListening(to: "session")
        receiver.stopListening(to: "session")
        #expect(receiver.listeners(of: "session") == 0)
        #expect(eventually { !receiver.isListening(to: "session") })
        #expect(try Self.subscribers(server.url, [redisName("session")]) == [0])
        sender.send(Array("not heard".utf8), on: "session")
        sender.send(Array("marker".utf8), on: "marker")
        #expect(inbox.wait(for: 3).map(\.1) == ["heard", "still heard", "marker"])
        // Listened to again: what is sent from then on.
        receiver.listen(to: "session")
        #expect(eventually { receiver.isListening(to: "session") })
        sender.send(Array("heard again".utf8), on: "session")
        #expect(inbox.wait(for: 4).map(\.1) == ["heard", "still heard", "marker", "heard again"])
    }

    /// After Redis restarts, every channel listened to is subscribed again (and said so), and
    /// none that is not.
    @Test func aRestartedRedisIsSubscribedAgain() throws {
        let server = try RedisTestServer(tcp: true, persistent: false)
        defer { server.remove() }
        let sender = RedisMessageRelay(url: server.url)
        let receiver = RedisMessageRelay(url: server.url)
        let confirmed = Locked<[String]>([])
        _ = RelayInbox.started(sender)
        let inbox = RelayInbox.started(receiver, listening: confirmed)
        defer {
            sender.stop()
            receiver.stop()
        }
        let channels = ["probe", "channel", "another"]
        for channel in channels + ["dropped"] { receiver.listen(to: channel) }
        receiver.stopListening(to: "dropped")
        Self.waitUntilSubscribed(sender, inbox)
        #expect(eventually { channels.allSatisfy(receiver.isListening(to:)) })
        #expect(eventually { !receiver.isListening(to: "dropped") })
        confirmed.withLock { $0.removeAll() }
        server.kill()
        try server.start()
        #expect(eventually { confirmed.withLock { $0.count } >= channels.count })
        #expect(eventually { channels.allSatisfy(receiver.isListening(to:)) })
        #expect(Set(confirmed.withLock { $0 }) == Set(channels))
        let names = (channels + ["dropped"]).map { "appshell:events:" + $0 }
        #expect(try Self.subscribers(server.url, names) == [1, 1, 1, 0])
        Self.waitUntilSubscribed(sender, inbox)
        sender.send(Array("after".utf8), on: "channel")
        #expect(inbox.wait(for: 1).map(\.1) == ["after"])
    }
}
