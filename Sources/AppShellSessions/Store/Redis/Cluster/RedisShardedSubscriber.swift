import AppShellConcurrency
import Glibc

/// A subscriber to sharded channels of a Redis Cluster (`SSUBSCRIBE`, Redis 7): a message
/// published on a channel (`RedisCluster.publish`) goes to the primary of the channel's slot and
/// its replicas only, not to every node, and reaches the subscribers connected there.
///
/// `subscribe` and `unsubscribe` count: a channel is subscribed from its first `subscribe` to the
/// `unsubscribe` that balances them all (so an instance subscribes a session's channel while it
/// holds a stream of that session). One thread of its own keeps a connection to each primary
/// serving a subscribed channel, subscribes each channel there, and hands every message to the
/// callback given to `start`, on that thread. It follows the cluster: when a node says a slot
/// moved (it unsubscribes its channels: `sunsubscribe` unasked, or `MOVED` to an `SSUBSCRIBE`) or
/// a connection fails, the map is fetched again and the channels subscribed where it says — every
/// 200 ms while their node cannot be reached, until its replica is promoted. Messages published
/// meanwhile are lost (best effort, as `StoreMessageRelay` has it); a failure is logged once until
/// the subscriber works again.
final class RedisShardedSubscriber: @unchecked Sendable {
    // @unchecked: `state` is in a lock; `links`, `failing` and the receive callback belong to the
    // subscriber's thread; `wake` is written by any thread, read by that thread.

    /// What the callers asked, for the subscriber's thread.
    struct State {
        /// The channels to be subscribed, with how many `subscribe`s each has outstanding.
        var wanted: [[UInt8]: Int] = [:]
        /// The channels whose count went from or to 0 since the thread last looked.
        var changed: Set<[UInt8]> = []
        /// The channels a node confirmed (`ssubscribe`), until it unsubscribed them.
        var confirmed: Set<[UInt8]> = []
        /// Whether `stop` was called.
        var stopping = false
        /// Whether the thread runs.
        var running = false
    }

    /// The cluster the channels are on.
    let cluster: RedisCluster
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

    /// A connection of the thread to a primary, and the channels it subscribed there.
    final class Link {
        /// The connection (waiting for messages as long as it takes).
        let connection: RedisConnection
        /// The channels subscribed on it.
        var channels: Set<[UInt8]> = []

        /// A link on `connection`.
        init(_ connection: RedisConnection) { self.connection = connection }
    }

    /// A subscriber to channels of `cluster`; it connects when started and channels are subscribed.
    init(cluster: RedisCluster) {
        self.cluster = cluster
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

    /// Starts the subscriber's thread, which hands each message (channel, payload) to `receive`.
    func start(_ receive: @escaping @Sendable (_ channel: [UInt8], _ message: [UInt8]) -> Void) {
        state.withLock { $0.running = true }
        let thread = BackgroundThread { [self] in
            run(receive)
            ended.lock()
            state.withLock { $0.running = false }
            ended.broadcast()
            ended.unlock()
        }
        thread.name = "appshell-sharded-in"
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

    /// Takes back one `subscribe` of `channel`: the last one unsubscribes it.
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
