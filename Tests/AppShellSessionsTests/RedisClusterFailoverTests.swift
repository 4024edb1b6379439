import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// A primary of a cluster of its own killed: requests for its slots fail soon with a
/// `StoreError` (a 503) until its replica is promoted, then succeed, with every write
/// acknowledged before the kill — and replicated, which `WAIT 1` made sure of: Redis replicates
/// asynchronously, and a write the replica had not received when its primary died is lost. A
/// sharded subscription of that node's slots comes back by itself on the promoted replica.
@Suite(.serialized) struct RedisClusterFailoverTests {
    @Test func aKilledPrimarysReplicaTakesOverWithEveryReplicatedWrite() throws {
        let testCluster = try RedisTestCluster()
        defer { testCluster.remove() }
        let cluster = try RedisCluster(url: testCluster.url, retryMilliseconds: 500)
        defer { cluster.close() }
        let keys = (0..<300).map { RedisClusterTests.bytes("{failover-\($0)}") }
        let written = try cluster.pipeline(keys.map { ($0, [RedisClusterTests.bytes("SET"), $0, $0]) })
        #expect(written.allSatisfy { $0 == .status("OK") })
        // WAIT on each primary's connection, the one the writes went on: acknowledged by its replica.
        for key in RedisClusterTests.keysOnEveryPrimary(cluster) {
            #expect(try cluster.command(["WAIT", "1", "5000"].map(RedisClusterTests.bytes), key: key) == .integer(1))
        }
        let victim = try testCluster.primaryPort(ofSlot: RedisSlot.of(keys[0]))
        let channel = keys[0]
        let subscriber = RedisSubscriber(cluster: try RedisCluster(url: testCluster.url))
        let received = Locked<[String]>([])
        subscriber.start { _, message in received.withLock { $0.append(String(decoding: message, as: UTF8.self)) } }
        defer { subscriber.stop() }
        subscriber.subscribe(channel)
        #expect(eventually { subscriber.isSubscribed(channel) })

        testCluster.server(victim).kill()
        let killed = Date()
        var failures = 0
        var longest = 0.0
        let recovered = eventually(within: 30) {
            let started = Date()
            defer { longest = max(longest, Date().timeIntervalSince(started)) }
            do {
                return try cluster.command([RedisClusterTests.bytes("GET"), keys[0]], key: keys[0]) == .bytes(keys[0])
            } catch {
                failures += 1
                return false
            }
        }
        #expect(recovered)
        #expect(failures > 0, "the slot's primary was gone a while")
        // No request waited much beyond the retry deadline (500 ms) while the node was gone.
        #expect(longest < 1.5, "a request took \(longest) s")
        print(
            "failover: served again \(Date().timeIntervalSince(killed)) s after the kill; \(failures) requests failed meanwhile"
        )
        #expect(cluster.primary(ofSlot: RedisSlot.of(keys[0]))?.name != "127.0.0.1:\(victim)")
        // The other nodes may say CLUSTERDOWN a moment longer, until they learn of the promotion.
        var read: [RedisReply] = []
        #expect(
            eventually {
                read = (try? cluster.pipeline(keys.map { ($0, [RedisClusterTests.bytes("GET"), $0]) })) ?? []
                return !read.isEmpty
            })
        #expect(read == keys.map { .bytes($0) })
        var sent = 0
        #expect(
            eventually {
                sent += 1
                _ = try? cluster.publish([(channel, RedisClusterTests.bytes("after \(sent)"))])
                return !received.withLock { $0.isEmpty }
            })
    }
}
