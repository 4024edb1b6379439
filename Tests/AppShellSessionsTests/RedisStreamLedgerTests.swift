import AppShellConcurrency
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

@testable import AppShellSessions

/// The ledger of a session's open streams at all the instances sharing a Redis store: the cap
/// holds over all of them, a place comes back when its stream ends or its instance stops, and
/// the places of an instance that died lapse.
@Suite struct RedisStreamLedgerTests {
    /// Whether `ledger` gave `stream` of `channel` a place (waits for its answer).
    static func admit(
        _ ledger: RedisStreamLedger, _ stream: String, of channel: String, limit: Int = 3,
        isOpen: @escaping @Sendable () -> Bool = { true }
    ) -> Bool? {
        let answer = Locked<Bool?>(nil)
        let given = DispatchSemaphore(value: 0)
        ledger.admit(stream, of: channel, limit: limit, isOpen: isOpen) { admitted in
            answer.withLock { $0 = admitted }
            given.signal()
        }
        guard given.wait(timeout: .now() + 10) == .success else { return nil }
        return answer.withLock { $0 }
    }

    /// The members of `channel`'s set, as Redis holds them.
    static func members(_ ledger: RedisStreamLedger, _ channel: String) throws -> [String] {
        let connection = try RedisConnection(url: ledger.url)
        defer { connection.close() }
        guard
            case .array(let members) = try connection.command([
                Array("ZRANGE".utf8), ledger.key(channel), [48], [45, 49],
            ])
        else { return [] }
        return members.compactMap(\.text)
    }

    /// Two started ledgers on one store, as two instances keep them.
    static func twoInstances() throws -> (RedisStreamLedger, RedisStreamLedger) {
        let server = try RedisTestServer.shared()
        let prefix = RedisTestServer.uniquePrefix()
        let ledgers = (
            RedisStreamLedger(url: server.url, keyPrefix: prefix), RedisStreamLedger(url: server.url, keyPrefix: prefix)
        )
        ledgers.0.start()
        ledgers.1.start()
        return ledgers
    }

    @Test func theCapHoldsOverTwoInstancesAndAPlaceComesBackWithItsStream() throws {
        let (first, second) = try Self.twoInstances()
        defer {
            first.stop()
            second.stop()
        }
        #expect(Self.admit(first, "1", of: "channel") == true)
        #expect(Self.admit(second, "1", of: "channel") == true)
        #expect(Self.admit(first, "2", of: "channel") == true)
        // Three open at the two instances: a fourth is refused at either.
        #expect(Self.admit(second, "2", of: "channel") == false)
        #expect(Self.admit(first, "3", of: "channel") == false)
        // Another session's channel has its own cap.
        #expect(Self.admit(second, "3", of: "other") == true)
        #expect(try Self.members(first, "channel").count == 3)
        // A stream that ends gives its place back: the other instance's next stream gets it.
        first.release("1", of: "channel")
        #expect(try eventually { try Self.members(first, "channel").count == 2 })
        #expect(Self.admit(second, "4", of: "channel") == true)
        #expect(Self.admit(second, "5", of: "channel") == false)
    }

    @Test func anInstanceThatStopsGivesBackItsPlaces() throws {
        let (stopping, staying) = try Self.twoInstances()
        defer { staying.stop() }
        for stream in ["1", "2", "3"] { #expect(Self.admit(stopping, stream, of: "channel") == true) }
        #expect(Self.admit(staying, "1", of: "channel") == false)
        stopping.stop()
        #expect(try Self.members(staying, "channel").isEmpty)
        #expect(Self.admit(staying, "2", of: "channel") == true)
    }

    /// A killed instance gives nothing back: its places lapse (here one lapsed long ago, as Redis
    /// sees it), and the next admission drops them before it counts.
    @Test func theLapsedPlacesOfADeadInstanceDoNotCount() throws {
        let server = try RedisTestServer.shared()
        let ledger = RedisStreamLedger(url: server.url, keyPrefix: RedisTestServer.uniquePrefix())
        ledger.start()
        defer { ledger.stop() }
        let connection = try RedisConnection(url: server.url)
        defer { connection.close() }
        for stream in ["dead:1", "dead:2", "dead:3"] {
            _ = try connection.command([Array("ZADD".utf8), ledger.key("channel"), [49], Array(stream.utf8)])
        }
        #expect(Self.admit(ledger, "1", of: "channel") == true)
        #expect(try Self.members(ledger, "channel").count == 1)
    }

    /// While its stream is open a place is renewed (its deadline moves on); once the stream says
    /// it ended, the renewal gives the place back.
    @Test func placesAreRenewedWhileTheirStreamsAreOpen() throws {
        let server = try RedisTestServer.shared()
        let ledger = RedisStreamLedger(
            url: server.url, keyPrefix: RedisTestServer.uniquePrefix(), leaseMilliseconds: 600)
        ledger.start()
        defer { ledger.stop() }
        let open = Locked(true)
        #expect(Self.admit(ledger, "1", of: "channel", isOpen: { open.withLock { $0 } }) == true)
        let connection = try RedisConnection(url: server.url)
        defer { connection.close() }
        let member = try #require(try Self.members(ledger, "channel").first)
        func deadline() throws -> Int64? {
            try connection.command([Array("ZSCORE".utf8), ledger.key("channel"), Array(member.utf8)]).integer
        }
        let first = try #require(try deadline())
        #expect(try eventually { (try deadline() ?? 0) > first }, "renewed")
        open.withLock { $0 = false }
        #expect(try eventually { try Self.members(ledger, "channel").isEmpty }, "given back once ended")
    }

    /// Without Redis the cap holds at each instance only: a stream is let in, not refused.
    @Test func anUnreachableRedisLetsStreamsIn() throws {
        let folder = NSTemporaryDirectory() + "appshell-no-redis-\(UUID().uuidString)"
        let ledger = RedisStreamLedger(url: try RedisURL("unix://\(folder)/none.sock"))
        ledger.start()
        defer { ledger.stop() }
        #expect(Self.admit(ledger, "1", of: "channel", limit: 1) == true)
        #expect(Self.admit(ledger, "2", of: "channel", limit: 1) == true)
    }
}
