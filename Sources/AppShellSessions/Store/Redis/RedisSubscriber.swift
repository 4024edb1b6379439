import AppShellConcurrency
import Glibc

/// A subscriber to exact Redis pub/sub channels: on one server (`SUBSCRIBE`), or on a Redis
/// Cluster's sharded channels (`SSUBSCRIBE`, Redis 7: a message published on a channel with
/// `RedisCluster.publish` goes to the primary of the channel's slot and its replicas only, not to
/// every node). Either way a message reaches only the subscribers of its channel.
///
/// `subscribe` and `unsubscribe` count: a channel is subscribed from its first `subscribe` to the
/// `unsubscribe` that balances them all (so an instance subscribes a session's channel while it
/// holds a stream of that session). One thread of its own keeps a connection to each node serving
/// a subscribed channel (the server, or the primary of each channel's slot), subscribes each
/// channel there — it sends those commands while it waits for messages, woken by a pipe — and
/// hands every message to the callback given to `start`, on that thread, and every subscription
/// the node confirmed to the other (from then on, what is published on the channel is received).
///
/// When a connection fails, the thread connects again every 200 ms and subscribes its channels
/// again. On a cluster it follows the slots too: when a node says a slot moved (it unsubscribes
/// its channels: `sunsubscribe` unasked, or `MOVED` to an `SSUBSCRIBE`) or a connection fails, the
/// map is fetched again and the channels subscribed where it says — until the failed primary's
/// replica is promoted. Messages published meanwhile are lost (best effort, as
/// `StoreMessageRelay` has it; the confirmation that follows tells the receiver to catch up); a
/// failure is logged once until the subscriber works again.
final class RedisSubscriber: @unchecked Sendable {
    // @unchecked: `state` is in a lock; `links`, `failing` and the callbacks belong to the
    // subscriber's thread; `wake` is written by any thread, read by that thread.

    /// What the callers asked, for the subscriber's thread.
    struct State {
        /// The channels to be subscribed, with how many `subscribe`s each has outstanding.
        var wanted: [[UInt8]: Int] = [:]
        /// The channels whose count went from or to 0 since the thread last looked.
        var changed: Set<[UInt8]> = []
        /// The channels a node confirmed (`subscribe`, `ssubscribe`), until it unsubscribed them.
        var confirmed: Set<[UInt8]> = []
        /// Whether `stop` was called.
        var stopping = false
        /// Whether the thread runs.
        var running = false
    }

    /// Where the channels are, and the commands and replies that subscribe them there.
    let source: RedisPubSubSource
    /// What the callers asked, and what the nodes confirmed.
    let state = Locked(State())
    /// Signalled when the thread ends (`stop` waits on it).
    let ended = Condition()
    /// The pipe that wakes the thread from `poll`: [read end, write end].
    let wake: [Int32]
    /// The thread's connections, by node name.
    var links: [String: Link] = [:]
    /// Whether a failure was logged and nothing has worked since (the thread's).
    var failing = false

    /// A connection of the thread to a node, and the channels it subscribed there.
    final class Link {
        /// The connection (waiting for messages as long as it takes).
        let connection: RedisConnection
        /// The channels subscribed on it.
        var channels: Set<[UInt8]> = []

        /// A link on `connection`.
        init(_ connection: RedisConnection) { self.connection = connection }
    }

    /// A subscriber to channels of the server at `url` (`SUBSCRIBE`); it connects when started
    /// and channels are subscribed.
    convenience init(server url: RedisURL, timeoutMilliseconds: Int = 2_000) {
        self.init(source: .server(url, timeoutMilliseconds: max(1, timeoutMilliseconds)))
    }

    /// A subscriber to sharded channels of `cluster` (`SSUBSCRIBE`); it connects when started and
    /// channels are subscribed.
    convenience init(cluster: RedisCluster) {
        self.init(source: .cluster(cluster))
    }

    private init(source: RedisPubSubSource) {
        self.source = source
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { fatalError("pipe: \(errno)") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wake = ends
    }

    deinit {
        close(wake[0])
        close(wake[1])
    }

    /// Starts the subscriber's thread, which hands each message (channel, payload) to `receive`,
    /// and each subscription a node confirmed to `subscribed` (again after a reconnection or a
    /// move: what was published on the channel meanwhile was lost).
    func start(
        _ receive: @escaping @Sendable (_ channel: [UInt8], _ message: [UInt8]) -> Void,
        subscribed: @escaping @Sendable (_ channel: [UInt8]) -> Void = { _ in }
    ) {
        state.withLock { $0.running = true }
        let thread = BackgroundThread { [self] in
            run(receive, subscribed: subscribed)
            ended.lock()
            state.withLock { $0.running = false }
            ended.broadcast()
            ended.unlock()
        }
        thread.name = source.threadName
        thread.start()
    }

    /// Subscribes `channel` (once more, when it is already).
    func subscribe(_ channel: [UInt8]) {
        let first = state.withLock { state in
            state.wanted[channel, default: 0] += 1
            guard state.wanted[channel] == 1 else { return false }
            state.changed.insert(channel)
            return true
        }
        if first { signal() }
    }

    /// Takes back one `subscribe` of `channel`: the last one unsubscribes it. One more than there
    /// were is ignored.
    func unsubscribe(_ channel: [UInt8]) {
        let last = state.withLock { state in
            guard let count = state.wanted[channel] else { return false }
            guard count == 1 else {
                state.wanted[channel] = count - 1
                return false
            }
            state.wanted[channel] = nil
            state.changed.insert(channel)
            return true
        }
        if last { signal() }
    }

    /// Whether a node has confirmed `channel`'s subscription (and not taken it back since): a
    /// message published on it now is received.
    func isSubscribed(_ channel: [UInt8]) -> Bool {
        state.withLock { $0.confirmed.contains(channel) }
    }

    /// How many `subscribe`s of `channel` are outstanding (0: not wanted).
    func subscriptions(of channel: [UInt8]) -> Int {
        state.withLock { $0.wanted[channel] ?? 0 }
    }

    /// The channels subscribed (wanted, confirmed or not).
    var channels: Set<[UInt8]> { state.withLock { Set($0.wanted.keys) } }

    /// Stops the thread and closes its connections; returns once it ended.
    func stop() {
        state.withLock { $0.stopping = true }
        signal()
        ended.lock()
        while state.withLock({ $0.running }) { ended.wait() }
        ended.unlock()
    }

    /// Wakes the thread from `poll`.
    func signal() {
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
    }
}

/// Where a `RedisSubscriber`'s channels are: one server, or the nodes of a cluster.
enum RedisPubSubSource: Sendable {
    /// One server (`SUBSCRIBE`, `UNSUBSCRIBE`, `message`).
    case server(RedisURL, timeoutMilliseconds: Int)
    /// A cluster's primaries, each channel at its slot's (`SSUBSCRIBE`, `SUNSUBSCRIBE`, `smessage`).
    case cluster(RedisCluster)

    /// The command that subscribes a channel.
    var subscribeCommand: [UInt8] {
        if case .server = self { Array("SUBSCRIBE".utf8) } else { Array("SSUBSCRIBE".utf8) }
    }

    /// The command that unsubscribes a channel.
    var unsubscribeCommand: [UInt8] {
        if case .server = self { Array("UNSUBSCRIBE".utf8) } else { Array("SUNSUBSCRIBE".utf8) }
    }

    /// The kind of reply that carries a message.
    var messageKind: [UInt8] {
        if case .server = self { Array("message".utf8) } else { Array("smessage".utf8) }
    }

    /// The kind of reply that confirms a subscription.
    var subscribedKind: [UInt8] {
        if case .server = self { Array("subscribe".utf8) } else { Array("ssubscribe".utf8) }
    }

    /// The kind of reply that ends one.
    var unsubscribedKind: [UInt8] {
        if case .server = self { Array("unsubscribe".utf8) } else { Array("sunsubscribe".utf8) }
    }

    /// The name of the subscriber's thread.
    var threadName: String {
        if case .server = self { "appshell-relay-in" } else { "appshell-sharded-in" }
    }

    /// What the subscriber's log lines begin with.
    var label: String {
        if case .server = self { "event relay" } else { "sharded subscriber" }
    }

    /// How long a connect may take.
    var timeoutMilliseconds: Int {
        switch self {
        case .server(_, let timeout): timeout
        case .cluster(let cluster): cluster.timeoutMilliseconds
        }
    }

    /// The slot map now (a cluster's; `nil` for a server): what a refresh compares with.
    var map: RedisSlotMap? {
        if case .cluster(let cluster) = self { cluster.map } else { nil }
    }

    /// The node `channel` is subscribed at, by `map` (`map`): its name and URL; `nil` when no
    /// node serves it now.
    func node(of channel: [UInt8], in map: RedisSlotMap?) -> (name: String, url: RedisURL)? {
        switch self {
        case .server(let url, _): return ("server", url)
        case .cluster:
            guard let primary = map?.primary(ofSlot: RedisSlot.of(channel)) else { return nil }
            return (primary.name, primary.url)
        }
    }

    /// Fetches the cluster's map again, unless it changed since `seen` (nothing for a server).
    func refresh(after seen: RedisSlotMap?) {
        if case .cluster(let cluster) = self, let seen { try? cluster.refresh(after: seen) }
    }
}
