import AppShellConcurrency
import Glibc

/// The `StoreMessageRelay` of instances sharing a Redis store: Redis pub/sub on exact channels,
/// `<prefix>events:<channel>`, so that Redis sends a message only to the instances listening to
/// its channel.
///
/// Two threads: one publishes what `send` queued (many messages in one round trip when they
/// gather), so no request waits for Redis; the other is a `RedisSubscriber`, which subscribes the
/// channels listened to (`SUBSCRIBE`/`UNSUBSCRIBE` on one server; `SSUBSCRIBE` on a cluster, whose
/// messages go out by `SPUBLISH` to the channel's slot) while it waits for messages, and hands
/// each on. Each message starts with this instance's random id, so that it skips its own. When
/// Redis goes away the subscriber connects again and subscribes every channel listened to again;
/// what was sent meanwhile is lost (best effort, see `StoreMessageRelay`); a failure is written to
/// standard error once until the relay works again.
package final class RedisMessageRelay: StoreMessageRelay, @unchecked Sendable {
    // @unchecked: `outbox` is guarded by `publisher.condition`; `publishing` belongs to the
    // publisher's thread (and to `stop`, once that thread ended).

    /// Where the messages go: one server's connection, or a cluster.
    private enum Outlet {
        case server(RedisURL)
        case cluster(RedisCluster)
    }

    /// What the relay's Redis channels begin with.
    package let channelPrefix: String
    private let prefixBytes: [UInt8]
    private let outlet: Outlet
    private let subscriber: RedisSubscriber
    private let sender: [UInt8]
    private let publisher: ServiceThread
    private var outbox: [(channel: String, message: [UInt8])] = []
    private var publishing: RedisConnection?

    /// A relay on the server at `url` for the store whose keys begin with `keyPrefix`; it
    /// connects when started.
    package init(url: RedisURL, keyPrefix: String = "appshell:") {
        channelPrefix = Self.channelPrefix(keyPrefix: keyPrefix)
        prefixBytes = Array(channelPrefix.utf8)
        outlet = .server(url)
        subscriber = RedisSubscriber(server: url)
        sender = Array(randomInstanceName().utf8)
        publisher = ServiceThread(name: "appshell-relay-out")
    }

    /// What the Redis channels of the relay of the store whose keys begin with `keyPrefix` begin
    /// with: the relay's channel names follow.
    static func channelPrefix(keyPrefix: String) -> String { keyPrefix + "events:" }

    /// The relay of the store at `url`: on its server, or on its cluster's sharded channels (whose
    /// slot map is read now: throws when no node can be reached).
    package static func ofStore(
        at url: RedisURL, keyPrefix: String = "appshell:"
    ) throws(StoreError)
        -> RedisMessageRelay
    {
        guard url.isCluster else { return RedisMessageRelay(url: url, keyPrefix: keyPrefix) }
        return RedisMessageRelay(cluster: try RedisCluster(url: url), keyPrefix: keyPrefix)
    }

    /// A relay on `cluster`'s sharded channels (`SPUBLISH`, `SSUBSCRIBE`) for the store whose keys
    /// begin with `keyPrefix`: each channel lives at its slot's primary.
    init(cluster: RedisCluster, keyPrefix: String = "appshell:") {
        channelPrefix = Self.channelPrefix(keyPrefix: keyPrefix)
        prefixBytes = Array(channelPrefix.utf8)
        outlet = .cluster(cluster)
        subscriber = RedisSubscriber(cluster: cluster)
        sender = Array(randomInstanceName().utf8)
        publisher = ServiceThread(name: "appshell-relay-out")
    }

    /// Queues `message` for the other instances.
    package func send(_ message: [UInt8], on channel: String) {
        let condition = publisher.condition
        condition.lock()
        defer { condition.unlock() }
        guard !publisher.isStopping else { return }
        outbox.append((channel, message))
        condition.signal()
    }

    /// Subscribes `channel` at its first `listen` (the subscriber's thread sends it).
    package func listen(to channel: String) {
        subscriber.subscribe(prefixBytes + Array(channel.utf8))
    }

    /// Unsubscribes `channel` at the `stopListening` that balances its `listen`s.
    package func stopListening(to channel: String) {
        subscriber.unsubscribe(prefixBytes + Array(channel.utf8))
    }

    /// How many `listen(to:)`s of `channel` are not yet balanced.
    package func listeners(of channel: String) -> Int {
        subscriber.subscriptions(of: prefixBytes + Array(channel.utf8))
    }

    /// Whether Redis has confirmed the subscription of `channel`: what is sent on it now is
    /// received.
    package func isListening(to channel: String) -> Bool {
        subscriber.isSubscribed(prefixBytes + Array(channel.utf8))
    }

    /// Starts both threads.
    package func start(
        _ receive: @escaping @Sendable (String, [UInt8]) -> Void,
        listening: @escaping @Sendable (String) -> Void
    ) {
        publisher.start { [self] in publish() }
        let (prefix, sender) = (prefixBytes, sender)
        subscriber.start { channel, payload in
            guard channel.starts(with: prefix), let newline = payload.firstIndex(of: 10),
                !payload[..<newline].elementsEqual(sender)
            else { return }
            receive(String(decoding: channel[prefix.count...], as: UTF8.self), Array(payload[(newline + 1)...]))
        } subscribed: { channel in
            guard channel.starts(with: prefix) else { return }
            listening(String(decoding: channel[prefix.count...], as: UTF8.self))
        }
    }

    /// Stops both threads (the publisher sends what is queued first).
    package func stop() {
        publisher.stop()
        // The publisher's thread has ended: its connection is closed here, before this returns.
        publishing?.close()
        publishing = nil
        subscriber.stop()
    }

    private func publish() {
        let condition = publisher.condition
        var failing = false
        while true {
            condition.lock()
            guard publisher.waitForWork({ !outbox.isEmpty }) else {
                condition.unlock()
                return
            }
            var batch: [(channel: String, message: [UInt8])] = []
            swap(&batch, &outbox)
            condition.unlock()
            do {
                try publish(batch.map { (prefixBytes + Array($0.channel.utf8), sender + [10] + $0.message) })
                failing = false
            } catch {
                publishing = nil
                if !failing {
                    Logger.appshell.error("event relay: \(batch.count) message(s) not sent: \(error)")
                }
                failing = true
            }
        }
    }

    /// Publishes `messages`: one round trip.
    private func publish(_ messages: [(channel: [UInt8], message: [UInt8])]) throws(StoreError) {
        switch outlet {
        case .server(let url):
            let command = Array("PUBLISH".utf8)
            if publishing == nil { publishing = try RedisConnection(url: url) }
            _ = try publishing?.pipeline(messages.map { [command, $0.channel, $0.message] })
        case .cluster(let cluster):
            _ = try cluster.publish(messages)
        }
    }
}
