import AppShellConcurrency
import AppShellHTTP
import AppShellSessions
import Testing

@testable import AppShell

/// Issue 31 (6): the messages the instances sharing a store send each other cross Redis, where a
/// subscriber or `MONITOR` reads them: they name a session by its store key, never by its id.
@Suite struct RelayedIDTests {
    /// A relay that keeps what is sent, and hands `deliver` to the test to play another instance.
    final class RecordingRelay: StoreMessageRelay {
        let sent = Locked<[(String, [UInt8])]>([])
        let receiver = Locked<(@Sendable (String, [UInt8]) -> Void)?>(nil)

        func send(_ message: [UInt8], on channel: String) { sent.withLock { $0.append((channel, message)) } }
        func listen(to channel: String) {}
        func stopListening(to channel: String) {}
        func start(
            _ receive: @escaping @Sendable (String, [UInt8]) -> Void, listening: @escaping @Sendable (String) -> Void
        ) { receiver.withLock { $0 = receive } }
        func stop() {}

        func deliver(_ text: String, on channel: String) { receiver.withLock { $0 }?(channel, Array(text.utf8)) }
        var texts: [String] { sent.withLock { $0.map { String(decoding: $0.1, as: UTF8.self) } } }
    }

    @Test func aRotationAndAnAnnouncementCarryTheStoreKeyNotTheId() {
        let relay = RecordingRelay()
        let events = ShellEvents(relay: relay)
        let id = SessionID.random()
        events.endStreams(of: "channel", notOpenedWith: id)
        events.announce(ScheduledNotification(due: 1_000, title: "t", body: "b"), for: id, on: "channel")
        let texts = relay.texts
        #expect(texts.count == 2)
        for text in texts {
            #expect(!text.contains(id.text), "\(text)")
            #expect(text.contains(id.storeKey.text), "\(text)")
        }
    }

    @Test func anAnnouncementReceivedNamesItsSessionByStoreKey() {
        let relay = RecordingRelay()
        let events = ShellEvents(relay: relay)
        let received = Locked<[(String, SessionStoreKey)]>([])
        events.startRelaying { _, channel, key in received.withLock { $0.append((channel, key)) } }
        defer { events.stopRelaying() }
        let id = SessionID.random()
        let json = ScheduledNotification(due: 1_000, title: "t", body: "b").json.serializedString
        relay.deliver("scheduled\n\(id.storeKey.text)\n\(json)", on: "channel")
        // An id as the versions before sent it is taken for a key (it names no session).
        relay.deliver("scheduled\n\(id.text)\n\(json)", on: "channel")
        let keys = received.withLock { $0 }
        #expect(keys.count == 2)
        #expect(keys.first?.0 == "channel" && keys.first?.1 == id.storeKey)
        // With no page of the session listening here, there is nobody here to show it to.
        #expect(events.sessionID(of: "channel", storeKey: id.storeKey) == nil)
    }

    /// A page's stream gets no relayed state of the version it opened with, or older: the other
    /// instance's event of the login that made that version can come after the stream opened here
    /// with it (make test-scaleout's events scenario saw version 2 twice). A stream opened before
    /// gets it, and each stream a newer one once.
    @Test func aRelayedStateNoNewerThanAStreamHasIsNotSentToIt() {
        let relay = RecordingRelay()
        let events = ShellEvents(relay: relay)
        events.startRelaying { _, _, _ in }
        defer { events.stopRelaying() }
        let (earlier, opened) = (EventStream(), EventStream())
        let count = StreamCount()
        events.subscribe(earlier, to: "channel", openedWith: SessionID.random(), version: 1, count: count)
        events.subscribe(opened, to: "channel", openedWith: SessionID.random(), version: 2, count: count)
        relay.deliver("state\nchannel.2\n{}", on: "channel")
        #expect(opened.queuedBytes == 0, "the stream got the state it opened with again")
        let heard = earlier.queuedBytes
        #expect(heard > 0)
        relay.deliver("state\nchannel.1\n{}", on: "channel")
        #expect(opened.queuedBytes == 0)
        #expect(earlier.queuedBytes == heard)
        relay.deliver("state\nchannel.3\n{}", on: "channel")
        #expect(opened.queuedBytes > 0)
        #expect(earlier.queuedBytes > heard)
    }
}
