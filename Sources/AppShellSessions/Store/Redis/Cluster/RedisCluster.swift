import AppShellConcurrency
import Glibc

/// A client of a Redis Cluster: each command goes to the primary serving its key's slot.
///
/// The slot map comes from `CLUSTER SLOTS` of any node that answers (the seeds of the URL, then
/// every node a map named). One connection per primary, opened at its first use, used under a
/// lock held for one round trip (`RedisClusterNode`): the cluster is safe to use from any thread,
/// and commands to one node from several threads queue there — make two clusters where the
/// single-server backend keeps a writer and a reader. A request reads the map through a lock held
/// only to take its reference.
///
/// What a node answers is followed: `MOVED` (the slot has a new primary — the map is fetched again
/// and the command sent to the named node), `ASK` (the slot is being migrated and the key is
/// already on the named node: `ASKING` and the command go there, the map is kept) — at most
/// `maximumRedirections` times per command. The `scripts` given are loaded on each node's
/// connection when it connects, and again on `NOSCRIPT` (`RedisConnection`); `evaluate` loads
/// another script where a node answers `NOSCRIPT` to it. A node that cannot be reached (nothing was sent) is left for the others: the map is
/// fetched again and the command retried until `retryMilliseconds` have passed, then a
/// `StoreError` is thrown (a 503: a failover takes longer than a request should wait; a later
/// request finds the promoted replica). `CLUSTERDOWN` and `TRYAGAIN` (the command did not run)
/// are retried the same way. A connection that fails after the command was sent throws at once:
/// the command's effect is unknown to the caller.
final class RedisCluster: @unchecked Sendable {
    // @unchecked: the mutable state is in `Locked`s; nodes lock their own connections.

    /// The cluster's URL (its seeds and credentials).
    let url: RedisURL
    /// How long a connect or a round trip may take.
    let timeoutMilliseconds: Int
    /// How long a command is retried while its node cannot be reached.
    let retryMilliseconds: Int
    /// How many redirections (`MOVED`, `ASK`, `NOSCRIPT`) a command follows at most.
    let maximumRedirections = 5
    /// Every node met, by `host:port`: the map's nodes are taken from here, so that a new map
    /// keeps the connections of the old.
    private let pool = Locked<[String: RedisClusterNode]>([:])
    /// The map now.
    private let current = Locked(RedisSlotMap.empty)
    /// Held while a map is fetched, so that threads that met the same change fetch it once.
    private let refreshing = Locked(())
    /// The scripts every node's connection loads (`RedisConnection.scripts`).
    let scripts: [RedisScript]
    /// Their texts by SHA-1: what a pipeline to several nodes loads where one answers `NOSCRIPT`
    /// (the connection does it for a pipeline to one node).
    let scriptTexts: [[UInt8]: [UInt8]]

    /// A client of the cluster at `url` (`isCluster`), whose commands call `scripts` by their
    /// SHA-1; fetches the slot map, and throws when no seed answers.
    init(
        url: RedisURL, timeoutMilliseconds: Int = 2_000, retryMilliseconds: Int = 1_000, scripts: [RedisScript] = []
    )
        throws(StoreError)
    {
        precondition(url.isCluster, "RedisCluster needs a redis-cluster:// URL")
        self.url = url
        self.scripts = scripts
        scriptTexts = Dictionary(scripts.map { ($0.sha, $0.text) }, uniquingKeysWith: { first, _ in first })
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
        self.retryMilliseconds = max(0, retryMilliseconds)
        try refresh(after: RedisSlotMap.empty)
    }

    deinit { close() }

    /// Closes every connection; later commands throw.
    func close() {
        for node in pool.withLock({ Array($0.values) }) { node.close() }
    }

    /// The slot of `key` (see `RedisSlot`).
    static func slot(of key: [UInt8]) -> Int { RedisSlot.of(key) }

    /// Sends `arguments` to the primary of `key`'s slot and returns its reply (an error reply too,
    /// but the cluster's own, which are followed or thrown).
    func command(_ arguments: [[UInt8]], key: [UInt8]) throws(StoreError) -> RedisReply {
        try run([(key, arguments)], script: nil)[0]
    }

    /// Sends `commands`, each to the primary of its key's slot — in the order given on each node,
    /// to every node before any reply is read, so one round trip for all — and returns their
    /// replies in the order given. Not for `MULTI`/`EXEC`: a script is what runs several commands
    /// at once. An `EVALSHA` of one of
    /// `scripts` (`RedisScript.call`) is loaded again where the node lost it.
    func pipeline(_ commands: [(key: [UInt8], arguments: [[UInt8]])]) throws(StoreError) -> [RedisReply] {
        try run(commands, script: nil)
    }

    /// Runs `script` with `keys` (all in one slot: give them one hash tag) and `arguments`: by
    /// `EVALSHA`, loading the script on the node that does not know it.
    func evaluate(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        precondition(!keys.isEmpty, "a script run on a cluster names its keys")
        return try run([(keys[0], script.call(keys, arguments))], script: script)[0]
    }

    /// Publishes each message on its sharded channel (`SPUBLISH`, to the primary of the channel's
    /// slot; one round trip for all the nodes); returns how many subscribers each reached.
    func publish(_ messages: [(channel: [UInt8], message: [UInt8])]) throws(StoreError) -> [Int] {
        let spublish = Array("SPUBLISH".utf8)
        let replies = try run(messages.map { ($0.channel, [spublish, $0.channel, $0.message]) }, script: nil)
        return replies.map { Int($0.integer ?? 0) }
    }

    /// The primaries now, by name (`host:port`): where to run what concerns every key (`SCAN`).
    var primaryNames: [String] { map.primaries.map(\.name) }

    /// Sends `arguments` to the node `name` (`primaryNames`) and returns its reply: no key, no
    /// redirection followed, no retry (`SCAN` with that node's cursor, `INFO`).
    func command(_ arguments: [[UInt8]], node name: String) throws(StoreError) -> RedisReply {
        guard let node = node(named: name) else { throw StoreError("store \(url): no node \(name)") }
        do throws(RedisClusterNode.Failure) {
            return try node.pipeline([arguments])[0]
        } catch {
            throw error.storeError
        }
    }

    /// The map now (its reference, taken under the lock).
    var map: RedisSlotMap { current.withLock { $0 } }

    /// The primary serving `slot` now, or `nil`.
    func primary(ofSlot slot: Int) -> RedisClusterNode? { map.primary(ofSlot: slot) }

    /// The pool's node at `name` (`host:port`), made when new.
    func node(named name: String) -> RedisClusterNode? {
        guard let colon = name.lastIndex(of: ":"), let port = Int(name[name.index(after: colon)...]) else {
            return nil
        }
        var host = name[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return node(host: String(host), port: port)
    }

    /// The pool's node at `host`:`port`, made when new.
    func node(host: String, port: Int) -> RedisClusterNode {
        let name = RedisClusterNode.name(host: host, port: port)
        return pool.withLock { pool in
            if let node = pool[name] { return node }
            let node = RedisClusterNode(
                url: url.node(host: host, port: port), timeoutMilliseconds: timeoutMilliseconds, scripts: scripts)
            pool[name] = node
            return node
        }
    }

    /// Fetches the map again, unless it changed since `seen` (another thread fetched it) or is
    /// younger than `minimumAge` milliseconds (while a node is down, the requests that fail do not
    /// each ask for a map): from the nodes `seen` names, then the seeds. Throws when none answers.
    func refresh(after seen: RedisSlotMap, minimumAge: Int64 = 0) throws(StoreError) {
        try refreshing.withLock { _ throws(StoreError) in
            guard map === seen, TimerQueue.monotonicClock() - seen.fetched >= minimumAge else { return }
            var candidates = seen.addresses
            for case .tcp(let host, let port) in url.clusterSeeds { candidates.append((host, port)) }
            var tried = Set<String>()
            var lastFailure = "no node"
            let slots = [[Array("CLUSTER".utf8), Array("SLOTS".utf8)]]
            for (host, port) in candidates where tried.insert(RedisClusterNode.name(host: host, port: port)).inserted {
                do throws(RedisClusterNode.Failure) {
                    let reply = try node(host: host, port: port).pipeline(slots)[0]
                    if let fetched = RedisSlotMap.parse(reply, askedHost: host, node: node(host:port:)) {
                        current.withLock { $0 = fetched }
                        return
                    }
                    lastFailure = "\(host):\(port) answered CLUSTER SLOTS with \(reply)"
                } catch {
                    lastFailure = error.storeError.description
                }
            }
            throw StoreError("store \(url): no node gave the slot map (\(lastFailure))")
        }
    }
}
