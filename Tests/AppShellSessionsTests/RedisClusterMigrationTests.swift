import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The client while slots move between the shared cluster's primaries: `MOVED` after a slot
/// moved, `ASK` during a migration, `NOSCRIPT` after `SCRIPT FLUSH`, sharded pub/sub across nodes
/// and after its slot moved.
extension RedisClusterTests {

    /// The port of a node of the map named `name` (`127.0.0.1:port`).
    static func port(_ name: String) -> Int { Int(name.split(separator: ":").last!)! }

    /// `key`'s slot begins to move from its primary to another: returns (slot, source, target ports).
    static func beginMigration(
        of key: [UInt8], in testCluster: RedisTestCluster, cluster: RedisCluster
    ) throws
        -> (slot: Int, source: Int, target: Int)
    {
        let slot = RedisSlot.of(key)
        let source = try testCluster.primaryPort(ofSlot: slot)
        let target = cluster.map.primaries.map { port($0.name) }.first { $0 != source }!
        let (sourceID, targetID) = (try testCluster.nodeID(source), try testCluster.nodeID(target))
        let importing = try direct(target).command(
            ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID].map(bytes))
        let migrating = try direct(source).command(
            ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID].map(bytes))
        #expect(importing == .status("OK") && migrating == .status("OK"))
        return (slot, source, target)
    }

    /// Moves `keys` of a migrating slot from `source` to `target`.
    static func migrate(_ keys: [[UInt8]], from source: Int, to target: Int) throws {
        let reply = try direct(source).command(
            ["MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "KEYS"].map(bytes) + keys)
        #expect(reply == .status("OK"))
    }

    /// Ends the migration of `slot`: every primary says `target` serves it.
    static func endMigration(
        _ slot: Int, to target: Int, in testCluster: RedisTestCluster, cluster: RedisCluster
    ) throws {
        let targetID = try testCluster.nodeID(target)
        let ports = [target] + cluster.map.primaries.map { port($0.name) }.filter { $0 != target }
        for port in ports {
            #expect(
                try direct(port).command(["CLUSTER", "SETSLOT", String(slot), "NODE", targetID].map(bytes))
                    == .status("OK"))
        }
    }

    @Test func movedIsFollowedAndTheMapRefreshedAndTheSubscriptionFollows() throws {
        let testCluster = try Self.shared.get()
        let cluster = try RedisCluster(url: testCluster.url)
        defer { cluster.close() }
        let key = Self.bytes("{moved-\(UUID().uuidString)}")
        #expect(try cluster.command([Self.bytes("SET"), key, Self.bytes("before")], key: key) == .status("OK"))
        let subscriber = RedisSubscriber(cluster: try RedisCluster(url: testCluster.url))
        let received = Locked<[String]>([])
        subscriber.start { _, message in received.withLock { $0.append(String(decoding: message, as: UTF8.self)) } }
        defer { subscriber.stop() }
        subscriber.subscribe(key)
        #expect(eventually { subscriber.isSubscribed(key) })

        let (slot, source, target) = try Self.beginMigration(of: key, in: testCluster, cluster: cluster)
        try Self.migrate([key], from: source, to: target)
        try Self.endMigration(slot, to: target, in: testCluster, cluster: cluster)
        #expect(cluster.primary(ofSlot: slot)?.name == "127.0.0.1:\(source)")
        #expect(try cluster.command([Self.bytes("GET"), key], key: key) == .bytes(Self.bytes("before")))
        #expect(cluster.primary(ofSlot: slot)?.name == "127.0.0.1:\(target)")
        // The source unsubscribed the channel of the slot it lost; the subscriber subscribes it on
        // the target, where a message published now arrives.
        var sent = 0
        #expect(
            eventually {
                sent += 1
                _ = try? cluster.publish([(key, Self.bytes("after \(sent)"))])
                return received.withLock { $0.contains { $0.hasPrefix("after") } }
            })
    }

    @Test func askIsFollowedDuringAMigrationWithoutChangingTheMap() throws {
        let testCluster = try Self.shared.get()
        let cluster = try RedisCluster(url: testCluster.url)
        defer { cluster.close() }
        let tag = "{ask-\(UUID().uuidString)}"
        let (stays, moves, new) = (Self.bytes(tag + "stays"), Self.bytes(tag + "moves"), Self.bytes(tag + "new"))
        _ = try cluster.pipeline([
            (stays, ["SET", tag + "stays", "1"].map(Self.bytes)), (moves, ["SET", tag + "moves", "2"].map(Self.bytes)),
        ])
        let (slot, source, target) = try Self.beginMigration(of: stays, in: testCluster, cluster: cluster)
        try Self.migrate([moves], from: source, to: target)
        // One key on each side of the migration, and a new one, which goes to the target.
        let replies = try cluster.pipeline([
            (moves, [Self.bytes("GET"), moves]), (stays, [Self.bytes("GET"), stays]),
            (new, [Self.bytes("SET"), new, Self.bytes("3")]), (moves, [Self.bytes("INCR"), moves]),
        ])
        #expect(replies == [.bytes(Self.bytes("2")), .bytes(Self.bytes("1")), .status("OK"), .integer(3)])
        #expect(cluster.primary(ofSlot: slot)?.name == "127.0.0.1:\(source)")
        let onTarget = try Self.direct(target).pipeline([[Self.bytes("ASKING")], [Self.bytes("GET"), new]])
        #expect(onTarget[1] == .bytes(Self.bytes("3")))
        try Self.migrate([stays], from: source, to: target)
        try Self.endMigration(slot, to: target, in: testCluster, cluster: cluster)
        #expect(try cluster.command([Self.bytes("GET"), stays], key: stays) == .bytes(Self.bytes("1")))
    }

    @Test func scriptsAreLoadedWhereANodeDoesNotKnowThem() throws {
        let testCluster = try Self.shared.get()
        let cluster = try RedisCluster(url: testCluster.url)
        defer { cluster.close() }
        let keys = Self.keysOnEveryPrimary(cluster)
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        let flush = { () throws in
            for node in cluster.map.primaries {
                #expect(
                    try Self.direct(Self.port(node.name)).command(["SCRIPT", "FLUSH"].map(Self.bytes)) == .status("OK"))
            }
        }
        try flush()
        for key in keys {
            #expect(try cluster.evaluate(script, keys: [key], arguments: [Self.bytes("1")]) == .integer(1))
        }
        try flush()
        for key in keys {
            #expect(try cluster.evaluate(script, keys: [key], arguments: [Self.bytes("1")]) == .integer(2))
        }
        // In a pipeline: a script the cluster was not given is its NOSCRIPT; one it was given, the
        // node's connection loads again.
        try flush()
        let commands = keys.map { ($0, script.call([$0], [Self.bytes("10")])) }
        #expect(try cluster.pipeline(commands).allSatisfy(\.isMissingScript))
        let withScripts = try RedisCluster(url: testCluster.url, scripts: [script])
        defer { withScripts.close() }
        #expect(try withScripts.pipeline(commands) == [.integer(12), .integer(12), .integer(12)])
        try flush()
        #expect(try withScripts.pipeline(commands) == [.integer(22), .integer(22), .integer(22)])
        try flush()
        #expect(try withScripts.pipeline([commands[0], commands[0]]) == [.integer(32), .integer(42)])
    }

    @Test func shardedMessagesReachTheirSubscribersOnEveryNodeInOrder() throws {
        let testCluster = try Self.shared.get()
        let cluster = try RedisCluster(url: testCluster.url)
        defer { cluster.close() }
        let channels = Self.keysOnEveryPrimary(cluster, prefix: "channel-\(UUID().uuidString)")
        let subscriber = RedisSubscriber(cluster: cluster)
        let received = Locked<[([UInt8], String)]>([])
        subscriber.start { channel, message in
            received.withLock { $0.append((channel, String(decoding: message, as: UTF8.self))) }
        }
        defer { subscriber.stop() }
        for channel in channels { subscriber.subscribe(channel) }
        subscriber.subscribe(channels[0])
        #expect(eventually { channels.allSatisfy(subscriber.isSubscribed) })
        let messages = (0..<30).map { (channels[$0 % 3], Self.bytes("m\($0)")) }
        #expect(try cluster.publish(messages) == Array(repeating: 1, count: 30))
        #expect(eventually { received.withLock { $0.count } == 30 })
        for (index, channel) in channels.enumerated() {
            let texts = received.withLock { $0.filter { $0.0 == channel }.map(\.1) }
            #expect(texts == stride(from: index, to: 30, by: 3).map { "m\($0)" })
        }
        // Subscribed twice: the first unsubscribe keeps it, the second ends it.
        subscriber.unsubscribe(channels[0])
        subscriber.unsubscribe(channels[1])
        #expect(eventually { !subscriber.isSubscribed(channels[1]) })
        #expect(subscriber.isSubscribed(channels[0]))
        #expect(try cluster.publish([(channels[0], Self.bytes("x")), (channels[1], Self.bytes("y"))]) == [1, 0])
        subscriber.unsubscribe(channels[0])
        #expect(eventually { !subscriber.isSubscribed(channels[0]) })
    }
}
