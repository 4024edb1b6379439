import AppShellConcurrency
import Glibc

/// The `StoreMessageRelay` of instances sharing a Redis store: Redis pub/sub, on the channels
/// `<prefix>events:<channel>`.
///
/// Two connections of its own, each with a thread: one publishes what `send` queued (many
/// messages in one round trip when they gather), so no request waits for Redis; the other is
/// subscribed to the prefix's channels (`PSUBSCRIBE`) and hands each message on. Each message
/// starts with this instance's random id, so that it skips its own. When Redis goes away the
/// subscriber connects again every half second and subscribes again; what was sent meanwhile is
/// lost (best effort, see `StoreMessageRelay`); a failure is written to standard error once
/// until the relay works again.
package final class RedisMessageRelay: StoreMessageRelay, @unchecked Sendable {
    // @unchecked: `outbox` is guarded by `publisher.condition`; `subscriberStopping`,
    // `subscriberRunning` and `subscriber` by `subscription`; `publishing` belongs to the
    // publisher's thread (and to `stop`, once that thread ended).

    /// The server.
    package let url: RedisURL
    /// What the relay's Redis channels begin with.
    package let channelPrefix: String
    private let sender: [UInt8]
    private let publisher: ServiceThread
    private var outbox: [(channel: String, message: [UInt8])] = []
    private var publishing: RedisConnection?
    private let subscription = Condition()
    private var subscriberStopping = false
    private var subscriberRunning = false
    private var subscriber: RedisConnection?

    /// A relay on `url` for the store whose keys begin with `keyPrefix`; it connects when started.
    package init(url: RedisURL, keyPrefix: String = "appshell:") {
        self.url = url
        channelPrefix = keyPrefix + "events:"
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

    /// Starts both threads.
    package func start(_ receive: @escaping @Sendable (String, [UInt8]) -> Void) {
        publisher.start { [self] in publish() }
        subscription.lock()
        subscriberRunning = true
        subscription.unlock()
        let thread = BackgroundThread { [self] in subscribe(receive) }
        thread.name = "appshell-relay-in"
        thread.start()
    }

    /// Stops both threads (the publisher sends what is queued first).
    package func stop() {
        publisher.stop()
        // The publisher's thread has ended: its connection is closed here, before this returns.
        publishing?.close()
        publishing = nil
        subscription.lock()
        subscriberStopping = true
        subscriber?.interrupt()
        subscription.broadcast()
        while subscriberRunning { subscription.wait() }
        subscription.unlock()
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
            let commands = batch.map {
                [Array("PUBLISH".utf8), Array((channelPrefix + $0.channel).utf8), sender + [10] + $0.message]
            }
            do {
                if publishing == nil { publishing = try RedisConnection(url: url) }
                _ = try publishing?.pipeline(commands)
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

    private func subscribe(_ receive: @Sendable (String, [UInt8]) -> Void) {
        var failing = false
        let pattern = Array((RedisDefaultsBackend.globEscaped(channelPrefix) + "*").utf8)
        while true {
            do {
                let connection = try RedisConnection(url: url, waitsForever: true)
                subscription.lock()
                if subscriberStopping {
                    subscription.unlock()
                    connection.close()
                    break
                }
                subscriber = connection
                subscription.unlock()
                let reply = try connection.command([Array("PSUBSCRIBE".utf8), pattern])
                if case .error(let message) = reply { throw StoreError("store \(url): PSUBSCRIBE: \(message)") }
                if failing { Logger.appshell.notice("event relay: receiving again") }
                failing = false
                while true { deliver(try connection.receive(), receive) }
            } catch {
                subscription.lock()
                subscriber = nil
                let stopping = subscriberStopping
                if !stopping {
                    if !failing { Logger.appshell.error("event relay: not receiving: \(error)") }
                    failing = true
                    subscription.wait(milliseconds: 500)
                }
                subscription.unlock()
                if stopping { break }
            }
        }
        subscription.lock()
        subscriberRunning = false
        subscription.broadcast()
        subscription.unlock()
    }

    /// Hands on a `pmessage` another instance sent.
    private func deliver(_ reply: RedisReply, _ receive: @Sendable (String, [UInt8]) -> Void) {
        guard case .array(let parts) = reply, parts.count == 4, parts[0].text == "pmessage",
            let channel = parts[2].text, channel.hasPrefix(channelPrefix), let payload = parts[3].bytes,
            let newline = payload.firstIndex(of: 10)
        else { return }
        guard payload[..<newline].elementsEqual(sender) == false else { return }
        receive(String(channel.dropFirst(channelPrefix.count)), Array(payload[(newline + 1)...]))
    }
}
