import AppShellConcurrency

/// Where the store's commands go: one server (a connection under a lock) or a Redis Cluster
/// (`RedisCluster`, which sends each command to the primary of its key's slot).
///
/// An enum, not a protocol: the single-server path stays a switch and the connection's own call,
/// with no allocation or lock more per command than before. A command's key, on a cluster, is
/// the one it names first: `KEYS[1]` of an `EVALSHA` (`RedisScript.call`), the second word of any
/// other (`HGET key …`, `SET key …`); a script's keys are in one slot (one hash tag).
enum RedisStoreLink: Sendable {
    /// One server, through this connection.
    case server(Locked<RedisConnection>)
    /// A Redis Cluster.
    case cluster(RedisCluster)

    /// Whether the commands go to a cluster (where a script's keys must be of one slot).
    var isCluster: Bool {
        if case .cluster = self { return true }
        return false
    }

    /// Sends `command` and returns its reply (an error reply too).
    func command(_ command: [[UInt8]]) throws(StoreError) -> RedisReply {
        switch self {
        case .server(let connection):
            return try connection.withLock { connection throws(StoreError) in try connection.command(command) }
        case .cluster(let cluster):
            return try cluster.command(command, key: Self.key(of: command))
        }
    }

    /// Sends `commands` in one round trip (on a cluster: one to each node concerned, all sent
    /// before any reply is read) and returns their replies in order.
    func pipeline(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        switch self {
        case .server(let connection):
            return try connection.withLock { connection throws(StoreError) in try connection.pipeline(commands) }
        case .cluster(let cluster):
            return try cluster.pipeline(commands.map { (Self.key(of: $0), $0) })
        }
    }

    /// The nodes that hold keys, by name: one (`""`) for a server, each primary for a cluster.
    var nodeNames: [String] {
        switch self {
        case .server: return [""]
        case .cluster(let cluster): return cluster.primaryNames
        }
    }

    /// Sends `command`, which concerns no key (`SCAN`, `CONFIG GET`), to the node `name`
    /// (`nodeNames`).
    func command(_ command: [[UInt8]], node name: String) throws(StoreError) -> RedisReply {
        switch self {
        case .server: return try self.command(command)
        case .cluster(let cluster): return try cluster.command(command, node: name)
        }
    }

    /// Closes the connection(s); later commands throw.
    func close() {
        switch self {
        case .server(let connection): connection.withLock { $0.close() }
        case .cluster(let cluster): cluster.close()
        }
    }

    /// The key a command names first: its slot is where a cluster sends it.
    static func key(of command: [[UInt8]]) -> [UInt8] {
        if command.count > 3, command[0] == evalsha { return command[3] }
        return command.count > 1 ? command[1] : []
    }

    private static let evalsha = Array("EVALSHA".utf8)
}
