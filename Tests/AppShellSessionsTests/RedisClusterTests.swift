import AppShellConcurrency
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The Redis Cluster client on a real cluster (`RedisTestCluster`: three primaries, a replica
/// each): slots, routing, pipelines across nodes, `MOVED`, `ASK`, `NOSCRIPT`, sharded pub/sub.
/// The failover tests are in `RedisClusterFailoverTests`, on a cluster of their own.
@Suite(.serialized) struct RedisClusterTests {
    /// The cluster of this suite, made at its first use.
    static let shared = Result { try RedisTestCluster() }

    /// Bytes of `text`.
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A key of a unique prefix on each of the cluster's three primaries: `{<prefix>n}` tags whose
    /// slots the given map serves by different nodes.
    static func keysOnEveryPrimary(_ cluster: RedisCluster, prefix: String = UUID().uuidString) -> [[UInt8]] {
        var byNode: [String: [UInt8]] = [:]
        var number = 0
        while byNode.count < cluster.map.primaries.count {
            let key = bytes("{\(prefix)-\(number)}")
            if let node = cluster.primary(ofSlot: RedisSlot.of(key)), byNode[node.name] == nil {
                byNode[node.name] = key
            }
            number += 1
        }
        return byNode.keys.sorted().map { byNode[$0]! }
    }

    /// A direct connection to one node, bypassing the client.
    static func direct(_ port: Int) throws -> RedisConnection {
        try RedisConnection(url: RedisURL(address: .tcp(host: "127.0.0.1", port: port)))
    }

    @Test func slotsFollowTheSpecificationAndTheServer() throws {
        // CRC16/XMODEM's check value is 0x31C3 for "123456789"; the others are CLUSTER KEYSLOT's.
        #expect(RedisSlot.of(Self.bytes("123456789")) == 0x31C3)
        #expect(RedisSlot.of(Self.bytes("foo")) == 12182)
        #expect(RedisSlot.of(Self.bytes("{user1000}.following")) == RedisSlot.of(Self.bytes("user1000")))
        #expect(RedisSlot.of(Self.bytes("{user1000}.followers")) == RedisSlot.of(Self.bytes("{user1000}.following")))
        #expect(RedisSlot.of(Self.bytes("foo{}{bar}")) == RedisSlot.of(Self.bytes("foo{}{bar}")))
        #expect(RedisSlot.of(Self.bytes("foo{{bar}}zap")) == RedisSlot.of(Self.bytes("{bar")))
        #expect(RedisSlot.of(Self.bytes("foo{bar}{zap}")) == RedisSlot.of(Self.bytes("bar")))
        let cluster = try Self.shared.get()
        let node = try Self.direct(cluster.ports[0])
        var generator = SystemRandomNumberGenerator()
        let keys =
            ["", "{}", "{}x", "a{", "}{a}", "{{}}", "appshell:session:{abc}", "prefix:user-sessions:{ü}"]
            + (0..<200).map { _ in
                String(
                    (0..<Int.random(in: 1...24, using: &generator)).map { _ in
                        "ab{}xyz:-é".randomElement(using: &generator)!
                    })
            }
        let replies = try node.pipeline(keys.map { [Self.bytes("CLUSTER"), Self.bytes("KEYSLOT"), Self.bytes($0)] })
        for (key, reply) in zip(keys, replies) {
            #expect(reply == .integer(Int64(RedisSlot.of(Self.bytes(key)))), "\(key)")
        }
    }

    @Test func clusterURLsParseAndBadOnesAreRefused() throws {
        #expect(
            try RedisURL("redis-cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002")
                == RedisURL(clusterSeeds: [
                    .tcp(host: "10.0.0.1", port: 7000), .tcp(host: "10.0.0.2", port: 6379),
                    .tcp(host: "::1", port: 7002),
                ]))
        let withCredentials = try RedisURL("REDIS-CLUSTER://app:s%40cret@h:1,h:2/0")
        #expect(
            withCredentials
                == RedisURL(
                    clusterSeeds: [.tcp(host: "h", port: 1), .tcp(host: "h", port: 2)], username: "app",
                    password: "s@cret"))
        #expect(withCredentials.isCluster && withCredentials.description == "redis-cluster://app:***@h:1,h:2")
        #expect(
            try RedisURL("redis-cluster://h:1?user=u&password=p")
                == RedisURL(clusterSeeds: [.tcp(host: "h", port: 1)], username: "u", password: "p"))
        #expect(try !RedisURL("redis://h:1").isCluster)
        // One connection does not take a cluster's URL for a server's.
        #expect(throws: StoreError.self) { _ = try RedisConnection(url: withCredentials) }
        // A URL that does not parse may hold its password anywhere: the error shows the scheme only.
        let error = try #require(throws: StoreError.self) { _ = try RedisURL("redis-cluster://u:pw@h:1,,h:2") }
        #expect(!error.description.contains("pw"), "\(error)")
        for (text, why) in [
            ("redis-cluster://h:1/2", "database 0 only"), ("redis-cluster://h:1?db=3", "database 0 only"),
            ("redis-cluster://h:1,,h:2", "empty node"), ("redis-cluster://", "empty node"),
            ("redis-cluster://h:99999", "port"), ("redis-cluster://h:1?timeout=2", "unknown parameter"),
            ("redis-cluster://user@h:1", "credentials"),
        ] {
            #expect(
                RedisURL.refusal(of: text)?.contains(why) == true, "\(text): \(RedisURL.refusal(of: text) ?? "nil")")
        }
    }

    @Test func commandsGoToTheirSlotsPrimaryAndAPipelineKeepsItsOrder() throws {
        let testCluster = try Self.shared.get()
        // The first seed cannot be reached: the map comes from the next.
        var seeds = testCluster.url.clusterSeeds
        seeds.insert(.tcp(host: "127.0.0.1", port: 1), at: 0)
        let cluster = try RedisCluster(url: RedisURL(clusterSeeds: seeds))
        defer { cluster.close() }
        #expect(cluster.map.primaries.count == 3)
        let keys = Self.keysOnEveryPrimary(cluster)
        for (number, key) in keys.enumerated() {
            #expect(try cluster.command([Self.bytes("SET"), key, Self.bytes("v\(number)")], key: key) == .status("OK"))
            // The value is on the primary the server says serves the slot.
            let port = try testCluster.primaryPort(ofSlot: RedisSlot.of(key))
            #expect(try Self.direct(port).command([Self.bytes("GET"), key]) == .bytes(Self.bytes("v\(number)")))
        }
        var commands: [(key: [UInt8], arguments: [[UInt8]])] = []
        for round in 0..<20 {
            let key = keys[round % keys.count]
            commands.append((key, [Self.bytes("INCR"), key + Self.bytes("n")]))
            commands.append((key, [Self.bytes("GET"), key]))
        }
        let replies = try cluster.pipeline(commands.map { ($0.key, $0.arguments) })
        #expect(replies.count == 40)
        for round in 0..<20 {
            let key = keys[round % keys.count]
            #expect(replies[2 * round] == .integer(Int64(round / keys.count + 1)), "\(round)")
            #expect(replies[2 * round + 1] == .bytes(Self.bytes("v\(round % keys.count)")), "\(round)")
        }
        // What concerns every key runs on each primary: SCAN finds the keys on their nodes.
        var found: [[UInt8]] = []
        for name in cluster.primaryNames {
            let reply = try cluster.command(
                [
                    "SCAN", "0", "MATCH", "*\(String(decoding: keys[0].dropFirst().prefix(36), as: UTF8.self))*",
                    "COUNT", "10000",
                ]
                .map(Self.bytes), node: name)
            guard case .array(let parts) = reply, case .array(let names) = parts[1] else { continue }
            found += names.compactMap(\.bytes)
        }
        #expect(Set(found) == Set(keys + keys.map { $0 + Self.bytes("n") }))
        // An error of a command is its reply; the others run.
        let mixed = try cluster.pipeline([
            (keys[0], [Self.bytes("LPUSH"), keys[0], Self.bytes("x")]), (keys[1], [Self.bytes("GET"), keys[1]]),
        ])
        #expect(mixed[0].isError && mixed[1] == .bytes(Self.bytes("v1")))
    }

    @Test func threadsShareTheClusterAndItsConnections() throws {
        let cluster = try RedisCluster(url: try Self.shared.get().url)
        defer { cluster.close() }
        let keys = Self.keysOnEveryPrimary(cluster)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for round in 0..<200 {
                do {
                    let key = keys[round % keys.count]
                    if round % 2 == 0 {
                        _ = try cluster.command([Self.bytes("INCR"), key], key: key)
                    } else {
                        _ = try cluster.pipeline(keys.map { ($0, [Self.bytes("INCR"), $0]) })
                    }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        // Each thread: 100 INCRs spread over the keys, and 100 pipelines of one INCR per key.
        let total = try cluster.pipeline(keys.map { ($0, [Self.bytes("GET"), $0]) }).compactMap(\.integer).reduce(0, +)
        #expect(total == 4 * (100 + 100 * Int64(keys.count)))
    }
}

extension RedisReply {
    /// Whether the reply is an error.
    var isError: Bool {
        if case .error = self { return true }
        return false
    }
}
