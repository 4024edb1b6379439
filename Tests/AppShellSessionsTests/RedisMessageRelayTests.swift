import AppShellConcurrency
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The relay between instances sharing a Redis store: what one sends, the others receive in
/// order, and not itself; it comes back by itself after Redis restarts.
@Suite(.serialized) struct RedisMessageRelayTests {
    /// Messages a relay received.
    final class Inbox: Sendable {
        let messages = Locked<[(String, String)]>([])

        func wait(for count: Int, seconds: Double = 10) -> [(String, String)] {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let received = messages.withLock { $0 }
                if received.count >= count { return received }
                usleep(5_000)
            }
            return messages.withLock { $0 }
        }
    }

    static func started(_ relay: RedisMessageRelay) -> Inbox {
        let inbox = Inbox()
        relay.start { channel, message in
            inbox.messages.withLock { $0.append((channel, String(decoding: message, as: UTF8.self))) }
        }
        return inbox
    }

    /// A subscriber connected and subscribed: a message sent now arrives.
    static func waitUntilSubscribed(_ sender: RedisMessageRelay, _ inbox: Inbox) {
        for attempt in 0..<200 {
            sender.send(Array("probe \(attempt)".utf8), on: "probe")
            if !inbox.wait(for: 1, seconds: 0.05).isEmpty { break }
        }
        inbox.messages.withLock { $0.removeAll() }
    }

    @Test func othersReceiveInOrderAndTheSenderDoesNot() throws {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        let first = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let second = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let other = RedisMessageRelay(url: server.url, keyPrefix: RedisTestServer.uniquePrefix())
        let firstInbox = Self.started(first)
        let secondInbox = Self.started(second)
        let otherInbox = Self.started(other)
        defer {
            first.stop()
            second.stop()
            other.stop()
        }
        Self.waitUntilSubscribed(first, secondInbox)
        firstInbox.messages.withLock { $0.removeAll() }
        for number in 0..<100 { first.send(Array("message \(number)".utf8), on: "channel.\(number % 3)") }
        let received = secondInbox.wait(for: 100)
        #expect(received.map(\.1) == (0..<100).map { "message \($0)" })
        #expect(received.map(\.0) == (0..<100).map { "channel.\($0 % 3)" })
        // Not the sender itself, nor a store with another prefix.
        usleep(100_000)
        #expect(firstInbox.messages.withLock { $0.isEmpty })
        #expect(otherInbox.messages.withLock { $0.isEmpty })
    }

    @Test func aRestartedRedisIsSubscribedAgain() throws {
        let server = try RedisTestServer(tcp: true, persistent: false)
        defer { server.remove() }
        let sender = RedisMessageRelay(url: server.url)
        let receiver = RedisMessageRelay(url: server.url)
        _ = Self.started(sender)
        let inbox = Self.started(receiver)
        defer {
            sender.stop()
            receiver.stop()
        }
        Self.waitUntilSubscribed(sender, inbox)
        server.kill()
        try server.start()
        Self.waitUntilSubscribed(sender, inbox)
        sender.send(Array("after".utf8), on: "channel")
        #expect(inbox.wait(for: 1).map(\.1) == ["after"])
    }
}
