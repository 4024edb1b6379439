import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The relay on a Redis Cluster's sharded channels (`init(cluster:)`, not yet what `ShellServer`
/// makes): the same listening as on one server, each channel subscribed at its slot's primary
/// only (`PUBSUB SHARDNUMSUB` there), messages sent with `SPUBLISH`.
@Suite(.serialized) struct RedisClusterRelayTests {
    @Test func aClusterRelayReceivesTheChannelsItListensTo() throws {
        let testCluster = try RedisTestCluster()
        defer { testCluster.remove() }
        let sender = RedisMessageRelay(cluster: try RedisCluster(url: testCluster.url))
        let receiver = RedisMessageRelay(cluster: try RedisCluster(url: testCluster.url))
        let confirmed = Locked<[String]>([])
        _ = RelayInbox.started(sender)
        let inbox = RelayInbox.started(receiver, listening: confirmed)
        defer {
            sender.stop()
            receiver.stop()
        }
        // Channels on different slots, so on different primaries.
        let channels = (0..<6).map { "session-\($0)" }
        for channel in channels { receiver.listen(to: channel) }
        #expect(eventually { channels.allSatisfy(receiver.isListening(to:)) })
        #expect(Set(confirmed.withLock { $0 }) == Set(channels))
        for channel in channels { sender.send(Array("to \(channel)".utf8), on: channel) }
        let received = inbox.wait(for: channels.count)
        #expect(Set(received.map(\.1)) == Set(channels.map { "to \($0)" }))
        // Subscribed at its slot's primary, and nowhere else.
        let name = "appshell:events:" + channels[0]
        let owner = try testCluster.primaryPort(ofSlot: RedisSlot.of(Array(name.utf8)))
        for port in testCluster.ports {
            let reply = try RedisTestCluster.cli(port: port, ["PUBSUB SHARDNUMSUB \(name)"])
            let count = reply.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
            #expect(count == (port == owner ? "1" : "0"), "\(port): \(reply)")
        }
        // No longer listened to: Redis sends it to nobody.
        receiver.stopListening(to: channels[0])
        #expect(eventually { !receiver.isListening(to: channels[0]) })
        let after = try RedisTestCluster.cli(port: owner, ["PUBSUB SHARDNUMSUB \(name)"])
        #expect(after.split(whereSeparator: \.isNewline).last == "0", "\(after)")
    }
}
