import AppShellSessions
import Foundation

/// A real Redis Cluster for tests: three primaries and a replica of each, six `redis-server`s
/// (`RedisTestServer`s, each watched the same way) on free TCP ports of 127.0.0.1, made into a
/// cluster by `redis-cli --cluster create`.
///
/// `cluster-node-timeout` is 1000 ms, so a replica takes over a killed primary in a few seconds.
/// Nothing is persisted; `WAIT` in a test makes a write reach a replica before it counts on it.
/// The servers are stopped and their folders removed once the test process is gone (or at once
/// by `remove()`).
public final class RedisTestCluster: @unchecked Sendable {
    // @unchecked: immutable but for the servers' own state, used by one test at a time.

    /// The servers, in the order they were created (the first three the primaries at first).
    public let servers: [RedisTestServer]
    /// The ports of `servers`.
    public let ports: [Int]
    /// The cluster's URL, naming every node as a seed.
    package let url: RedisURL

    /// Starts six servers and makes them a cluster; returns once every node says `cluster_state:ok`
    /// and knows the five others, and every replica is in sync with its primary.
    public init() throws {
        var servers: [RedisTestServer] = []
        var ports: [Int] = []
        for _ in 0..<6 {
            let server = try RedisTestServer(
                tcp: true, persistent: false, clusterBus: true,
                extra: [
                    "--cluster-enabled", "yes", "--cluster-node-timeout", "1000", "--cluster-config-file", "nodes.conf",
                    "--repl-diskless-sync-delay", "0",
                ])
            RedisTestServer.removeAtExit(server.folder)
            guard case .tcp(_, let port) = server.url.address else { throw RedisTestServerError(message: "not TCP") }
            servers.append(server)
            ports.append(port)
        }
        self.servers = servers
        self.ports = ports
        url = RedisURL(clusterSeeds: ports.map { .tcp(host: "127.0.0.1", port: $0) })
        try create()
        try waitUntilHealthy(of: ports)
    }

    /// Makes the servers a cluster: `redis-cli --cluster create … --cluster-replicas 1`. (Done by
    /// hand — slots, epochs, meetings, replicas — it is no faster: a primary does not say
    /// `cluster_state:ok` before 2 s after it started.)
    private func create() throws {
        let created = try Self.cli(
            ["--cluster", "create"] + ports.map { "127.0.0.1:\($0)" } + ["--cluster-replicas", "1", "--cluster-yes"])
        guard created.contains("[OK] All 16384 slots covered") else {
            throw RedisTestServerError(message: "redis-cli --cluster create: \(created)")
        }
    }

    /// Waits (10 s at most) until each node of `ports` says `cluster_state:ok`, knows the others
    /// and has its replicas in sync.
    public func waitUntilHealthy(of ports: [Int]? = nil, seconds: Double = 10) throws {
        try wait(seconds: seconds, "the cluster to be healthy") {
            for port in ports ?? self.ports {
                let info = try Self.cli(port: port, ["cluster info", "info replication"])
                guard info.contains("cluster_state:ok"), info.contains("cluster_known_nodes:6") else { return false }
                let replication = info
                if replication.contains("role:slave"), !replication.contains("master_link_status:up") { return false }
                if replication.contains("role:master"), !replication.contains("connected_slaves:1") { return false }
            }
            return true
        }
    }

    /// The port of the primary serving `slot` now, as the node at `asking` says.
    public func primaryPort(ofSlot slot: Int, asking: Int? = nil) throws -> Int {
        let nodes = try Self.cli(["-p", String(asking ?? ports[0]), "cluster", "nodes"])
        for line in nodes.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 9, fields[2].contains("master"), !fields[2].contains("fail") else { continue }
            for range in fields[8...] {
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                guard let first = bounds.first else { continue }
                if (first...(bounds.last ?? first)).contains(slot),
                    let port = Int(fields[1].split(separator: "@")[0].split(separator: ":").last ?? "")
                {
                    return port
                }
            }
        }
        throw RedisTestServerError(message: "no primary serves slot \(slot)")
    }

    /// The node id of the node at `port`.
    public func nodeID(_ port: Int) throws -> String {
        try Self.cli(["-p", String(port), "cluster", "myid"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A store backend on this cluster whose keys start with a prefix of its own.
    package func backend(expiry: RedisDefaultsBackend.Expiry? = nil) throws -> RedisDefaultsBackend {
        try RedisDefaultsBackend(url: url, keyPrefix: RedisTestServer.uniquePrefix(), expiry: expiry)
    }

    /// The server at `port`.
    public func server(_ port: Int) -> RedisTestServer { servers[ports.firstIndex(of: port)!] }

    /// Kills every server and removes their folders.
    public func remove() {
        for server in servers { server.remove() }
    }

    /// What `redis-cli` prints for `commands` (one a line) sent to the node at `port`.
    @discardableResult
    public static func cli(port: Int, _ commands: [String]) throws -> String {
        try cli(["-p", String(port)], input: commands.joined(separator: "\n") + "\n")
    }

    /// What `redis-cli` prints for `arguments` (standard output and error), given `input`.
    @discardableResult
    public static func cli(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Returns once `condition` holds, checked every 20 ms; throws after `seconds`.
    public func wait(seconds: Double, _ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else { throw RedisTestServerError(message: "timed out waiting for \(what)") }
            usleep(20_000)
        }
    }
}
