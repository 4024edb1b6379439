import AppShellConcurrency

/// The `StreamLedger` of instances sharing a Redis store: one sorted set per channel,
/// `<prefix>streams:{<channel>}`, whose members are the open streams (`<instance>:<stream>`),
/// each scored with the moment its place lapses unless renewed (milliseconds, Redis's clock).
///
/// A place is taken by a script that first drops the lapsed ones, then counts: atomic on the
/// server, so two instances letting in a channel's last stream at once cannot both get it. One
/// connection and a thread of their own serve the ledger, so no request waits for Redis: the
/// admissions queued meanwhile go in one round trip. Every `leaseMilliseconds / 3` the thread
/// renews the places of the streams still open here (and gives back those that ended without
/// saying so), so the places of an instance that was killed lapse within `leaseMilliseconds`.
/// When Redis cannot be reached a stream is let in (see `StreamLedger`); a failure is written to
/// standard error once until the ledger works again.
package final class RedisStreamLedger: StreamLedger, @unchecked Sendable {
    // @unchecked: `queue` is guarded by `service.condition`; `held`, `connection`, `failing` and
    // `renewed` belong to the service's thread (and to `stop`, once that thread ended).

    private enum Work {
        case admit(
            member: [UInt8], key: [UInt8], limit: Int, isOpen: @Sendable () -> Bool, done: @Sendable (Bool) -> Void)
        case release(member: [UInt8], key: [UInt8])
    }

    /// A place this instance holds, and how to tell whether its stream is still open.
    private struct Place {
        let member: [UInt8]
        let isOpen: @Sendable () -> Bool
    }

    /// The server.
    package let url: RedisURL
    /// What the ledger's keys begin with.
    package let keyPrefix: String
    /// How long a place lasts unless its instance renews it.
    package let leaseMilliseconds: Int
    private let instance: String
    private let service = ServiceThread(name: "appshell-streams")
    private var queue: [Work] = []
    private var held: [[UInt8]: [Place]] = [:]
    // One server's connection, or a cluster's client (each channel's set is one key, one slot).
    private var connection: RedisStoreLink?
    private var failing = false
    private var renewed = TimerQueue.monotonicClock()

    /// A ledger on `url` for the store whose keys begin with `keyPrefix`; it connects when
    /// started. A place lapses `leaseMilliseconds` after it was last renewed (60 s by default).
    package init(url: RedisURL, keyPrefix: String = "appshell:", leaseMilliseconds: Int = 60_000) {
        self.url = url
        self.keyPrefix = keyPrefix
        self.leaseMilliseconds = max(leaseMilliseconds, 300)
        instance = randomInstanceName()
    }

    /// The key of `channel`'s set.
    func key(_ channel: String) -> [UInt8] { Array((keyPrefix + "streams:{" + channel + "}").utf8) }

    /// Queues the admission of `stream` of `channel` (see `StreamLedger`).
    package func admit(
        _ stream: String, of channel: String, limit: Int, isOpen: @escaping @Sendable () -> Bool,
        _ done: @escaping @Sendable (Bool) -> Void
    ) {
        let work = Work.admit(
            member: Array((instance + ":" + stream).utf8), key: key(channel), limit: limit, isOpen: isOpen, done: done)
        if !enqueue(work) { done(true) }
    }

    /// Queues giving back the place of `stream` of `channel`.
    package func release(_ stream: String, of channel: String) {
        _ = enqueue(.release(member: Array((instance + ":" + stream).utf8), key: key(channel)))
    }

    /// Queues `work`; false when the ledger stopped.
    private func enqueue(_ work: Work) -> Bool {
        let condition = service.condition
        condition.lock()
        defer { condition.unlock() }
        guard !service.isStopping else { return false }
        queue.append(work)
        condition.signal()
        return true
    }

    /// Starts the ledger's thread.
    package func start() {
        service.start { [self] in serve() }
    }

    /// Gives back every place held here (admissions still queued are let in), and stops.
    package func stop() {
        service.stop()
        // The thread has ended (its last touch of `held` and `connection` happened before `stop`
        // returned): the places are given back here, so that they are back when this returns.
        giveBackEverything()
    }

    private func serve() {
        let condition = service.condition
        let renewal = Int64(leaseMilliseconds / 3)
        while true {
            condition.lock()
            guard service.waitForWork({ !queue.isEmpty }, atMostMilliseconds: Int(renewal)) else {
                condition.unlock()
                return
            }
            var batch: [Work] = []
            swap(&batch, &queue)
            condition.unlock()
            if !batch.isEmpty { run(batch) }
            if TimerQueue.monotonicClock() - renewed >= renewal { renew() }
        }
    }

    /// Runs a batch of admissions and releases in one round trip; then tells each admission.
    private func run(_ batch: [Work]) {
        let lease = Array(String(leaseMilliseconds).utf8)
        let commands = batch.map { work -> [[UInt8]] in
            switch work {
            case .admit(let member, let key, let limit, _, _):
                Self.admitScript.call([key], [member, bytes(String(limit)), lease])
            case .release(let member, let key):
                [bytes("ZREM"), key, member]
            }
        }
        let replies = send(commands, "\(commands.count) admission(s) or release(s)")
        for (index, work) in batch.enumerated() {
            switch work {
            case .admit(let member, let key, _, let isOpen, let done):
                // No answer (Redis away): let it in, and count it once Redis is back.
                let admitted = replies.map { $0[index] != .integer(0) } ?? true
                if admitted { held[key, default: []].append(Place(member: member, isOpen: isOpen)) }
                done(admitted)
            case .release(let member, let key):
                held[key]?.removeAll { $0.member == member }
                if held[key]?.isEmpty == true { held[key] = nil }
            }
        }
    }

    /// Renews the places of the streams still open, and gives back those of streams that ended.
    private func renew() {
        renewed = TimerQueue.monotonicClock()
        var commands: [[[UInt8]]] = []
        for (key, places) in held {
            let open = places.filter { $0.isOpen() }
            let ended = places.filter { !$0.isOpen() }
            if !ended.isEmpty { commands.append([bytes("ZREM"), key] + ended.map(\.member)) }
            if open.isEmpty {
                held[key] = nil
            } else {
                held[key] = open
                commands.append(
                    Self.renewScript.call([key], [Array(String(leaseMilliseconds).utf8)] + open.map(\.member)))
            }
        }
        if !commands.isEmpty { _ = send(commands, "renewing \(held.count) channel(s)") }
    }

    /// Gives back every place held here (the instance stops; called once the thread ended).
    private func giveBackEverything() {
        let commands = held.map { key, places in [bytes("ZREM"), key] + places.map(\.member) }
        held = [:]
        if !commands.isEmpty { _ = send(commands, "giving back the places of \(commands.count) channel(s)") }
        connection?.close()
        connection = nil
    }

    /// `commands` in one round trip, or `nil` when Redis could not be reached or refused one
    /// (written to standard error once until it works again).
    private func send(_ commands: [[[UInt8]]], _ what: String) -> [RedisReply]? {
        do {
            if connection == nil {
                let scripts = [Self.admitScript, Self.renewScript]
                connection =
                    url.isCluster
                    ? .cluster(try RedisCluster(url: url, scripts: scripts))
                    : .server(Locked(try RedisConnection(url: url, scripts: scripts)))
            }
            guard let connection else { return nil }
            let replies = try connection.pipeline(commands)
            if let refused = replies.first(where: { if case .error = $0 { true } else { false } }) {
                throw StoreError("store \(url): stream ledger: \(refused)")
            }
            if failing { Logger.appshell.notice("stream ledger: working again") }
            failing = false
            return replies
        } catch {
            connection?.close()
            connection = nil
            if !failing {
                Logger.appshell.error(
                    "stream ledger: \(what) not made (the cap on a session's streams holds at each instance only meanwhile): \(error)"
                )
            }
            failing = true
            return nil
        }
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// KEYS[1]: the channel's set; ARGV: the member, the limit, the lease. Drops the lapsed
    /// places, then adds the member if there is room: 1 when it has a place, 0 when not.
    static let admitScript = RedisScript(
        """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
          return 0
        end
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
        """)

    /// KEYS[1]: the channel's set; ARGV: the lease, then the members to renew (added again when
    /// they lapsed meanwhile: their streams are open).
    static let renewScript = RedisScript(
        """
        local time = redis.call('TIME')
        local deadline = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[1])
        for index = 2, #ARGV do redis.call('ZADD', KEYS[1], deadline, ARGV[index]) end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return 1
        """)
}
