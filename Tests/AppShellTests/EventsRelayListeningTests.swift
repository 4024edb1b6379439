import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShell
@testable import AppShellSessions

/// Issue 36: an instance hears a session's channel only while it holds a stream of it — from the
/// channel's first stream here to its last, whichever way each leaves (closed, refused, ended at
/// a rotation, with its session, with its user, freed unsent) — and the users' channel always.
/// With a real relay on a real `redis-server`: its counts balance, and Redis holds the
/// subscriptions they say.
@Suite(.serialized) struct EventsRelayListeningTests {
    /// A hub relaying through a fresh relay on the shared test server; stop it with `stopRelaying`.
    static func hub() throws -> (ShellEvents, RedisMessageRelay, RedisURL, String) {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        let relay = RedisMessageRelay(url: server.url, keyPrefix: prefix)
        let events = ShellEvents(relay: relay)
        events.startRelaying { _, _, _ in }
        return (events, relay, server.url, prefix)
    }

    /// How many clients Redis has subscribed to `channel` of the store `prefix`.
    static func subscribers(_ url: RedisURL, _ prefix: String, _ channel: String) throws -> Int64 {
        let connection = try RedisConnection(url: url)
        defer { connection.close() }
        let reply = try connection.command(["PUBSUB", "NUMSUB", prefix + "events:" + channel].map { Array($0.utf8) })
        guard case .array(let parts) = reply, parts.count == 2 else { return -1 }
        return parts[1].integer ?? -1
    }

    @Test func aChannelIsHeardFromItsFirstStreamToItsLast() throws {
        let (events, relay, url, prefix) = try Self.hub()
        defer { events.stopRelaying() }
        #expect(relay.listeners(of: ShellEvents.usersChannel) == 1)
        let count = StreamCount()
        var first: EventStream? = EventStream()
        var second: EventStream? = EventStream()
        events.subscribe(first!, to: "a", openedWith: SessionID.random(), count: count)
        events.subscribe(second!, to: "a", openedWith: SessionID.random(), count: count)
        // One listen per channel, however many streams.
        #expect(relay.listeners(of: "a") == 1)
        #expect(try eventually { try Self.subscribers(url, prefix, "a") == 1 })
        // A stream closed (the client left): released, it leaves.
        first?.close()
        first = nil
        #expect(relay.listeners(of: "a") == 1)
        second?.close()
        second = nil
        #expect(relay.listeners(of: "a") == 0)
        #expect(try eventually { try Self.subscribers(url, prefix, "a") == 0 })
        #expect(try Self.subscribers(url, prefix, ShellEvents.usersChannel) == 1)
    }

    @Test func everyWayAStreamLeavesCountsOnce() throws {
        let (events, relay, url, prefix) = try Self.hub()
        defer { events.stopRelaying() }
        let count = StreamCount()
        let (kept, rotated) = (SessionID.random(), SessionID.random())
        // Refused (its place in the ledger): unsubscribed, then closed and released — the close
        // after does not take back the listen of a stream that came since.
        var refused: EventStream? = EventStream()
        events.subscribe(refused!, to: "refused", openedWith: kept, count: count)
        events.unsubscribe(refused!, from: "refused")
        #expect(relay.listeners(of: "refused") == 0)
        let later = EventStream()
        events.subscribe(later, to: "refused", openedWith: kept, count: count)
        refused?.close()
        refused = nil
        #expect(relay.listeners(of: "refused") == 1)
        // Ended at a rotation: the old id's streams leave, the new one's stay.
        let old = EventStream()
        let current = EventStream()
        events.subscribe(old, to: "rotation", openedWith: rotated, count: count)
        events.subscribe(current, to: "rotation", openedWith: kept, count: count)
        events.endStreams(of: "rotation", notOpenedWith: kept)
        #expect(relay.listeners(of: "rotation") == 1)
        events.endStreams(of: "rotation")
        #expect(relay.listeners(of: "rotation") == 0)
        // Ended with their sessions, and with their user (log out everywhere).
        events.subscribe(EventStream(), to: "ended", openedWith: rotated, count: count)
        let held = EventStream()
        events.subscribe(held, to: "ended", openedWith: rotated, count: count)
        events.endStreams(openedWith: [rotated])
        #expect(relay.listeners(of: "ended") == 0)
        let ann = EventStream()
        events.subscribe(ann, to: "user", openedWith: SessionID.random(), user: "ann", count: count)
        events.endStreams(ofUser: "ann", exceptStoreKey: nil)
        #expect(relay.listeners(of: "user") == 0)
        // Freed without ever being sent (the request failed after the handler made it).
        events.subscribe(EventStream(), to: "unsent", openedWith: kept, count: count)
        #expect(relay.listeners(of: "unsent") == 0)
        // A closed stream a new one finds (`hasRoom`), and the closed ones' handlers after.
        var closed: EventStream? = EventStream()
        events.subscribe(closed!, to: "closed", openedWith: kept, count: count)
        closed?.close()
        #expect(events.hasRoom("closed"))
        #expect(relay.listeners(of: "closed") == 0)
        closed = nil
        for stream in [old, current, held, ann] { stream.close() }
        #expect(relay.listeners(of: "closed") == 0)
        #expect(relay.listeners(of: "rotation") == 0)
        // What is left: the stream opened since on "refused", and the users' channel.
        #expect(relay.listeners(of: "refused") == 1)
        #expect(relay.listeners(of: ShellEvents.usersChannel) == 1)
        for channel in ["rotation", "ended", "user", "unsent", "closed"] {
            #expect(try eventually { try Self.subscribers(url, prefix, channel) == 0 }, "\(channel)")
        }
        #expect(try eventually { try Self.subscribers(url, prefix, "refused") == 1 })
        later.close()
        events.endStreams(of: "refused")
        #expect(relay.listeners(of: "refused") == 0)
        events.stopRelaying()
        #expect(relay.listeners(of: ShellEvents.usersChannel) == 0)
    }

    /// What another instance committed while a channel was being subscribed, or while Redis was
    /// away, was not heard: once the channel is heard, its streams' session is read again (from
    /// the version after the oldest a stream has).
    @Test func aChannelHeardAgainHasItsSessionReadAgain() throws {
        let server = try RedisTestServer(tcp: true, persistent: false)
        defer { server.remove() }
        let relay = RedisMessageRelay(url: server.url)
        let events = ShellEvents(relay: relay)
        let reads = Locked<[(String, SessionID, Int)]>([])
        events.startRelaying { _, _, _ in
        } changed: { channel, id, version in
            reads.withLock { $0.append((channel, id, version)) }
        }
        defer { events.stopRelaying() }
        let (older, newer) = (SessionID.random(), SessionID.random())
        let streams = [EventStream(), EventStream()]
        events.subscribe(streams[0], to: "session", openedWith: newer, version: 7, count: StreamCount())
        events.subscribe(streams[1], to: "session", openedWith: older, version: 5, count: StreamCount())
        #expect(eventually { reads.withLock { $0.count } == 1 })
        #expect(reads.withLock { $0.first.map { [$0.0, $0.1.text, String($0.2)] } } == ["session", older.text, "6"])
        server.kill()
        try server.start()
        #expect(eventually { reads.withLock { $0.count } == 2 })
        #expect(reads.withLock { $0.last.map { [$0.0, $0.1.text, String($0.2)] } } == ["session", older.text, "6"])
        // The users' channel has no stream: nothing to read.
        #expect(reads.withLock { $0.allSatisfy { $0.0 == "session" } })
    }
}
