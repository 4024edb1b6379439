import AppShellConcurrency
import AppShellTesting
import Glibc
import Testing

@testable import AppShellHTTP

/// Connections that wait for a request (never sent one, or kept alive after an answer) cannot hold
/// the server's slots: a kept-alive connection has its own short timeout, and near the connection
/// limit the oldest waiting ones are closed for new clients (issue 31, finding 1).
@Suite struct IdleConnectionTests {
    /// Sends `GET /ok` on `connection` and reads its answer; returns the header block.
    @discardableResult
    static func requestOK(on connection: RawConnection) throws -> String {
        try connection.send("GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let headers = try connection.read(through: "\r\n\r\n")
        _ = try connection.readBytes(2)
        return headers
    }

    /// Fails on the code before: libmicrohttpd's idle timeout (600 s here) was the only one, so the
    /// read below timed out after 30 s with the connection still open.
    @Test func aConnectionKeptAliveIsClosedAfterTheKeepAliveTimeout() throws {
        let (live, _) = try EventStreamTests.start {
            $0.keepAliveTimeoutSeconds = 1
            $0.idleTimeoutSeconds = 600
        }
        let connection = try RawConnection(port: live.port, timeoutSeconds: 30)
        let headers = try Self.requestOK(on: connection)
        #expect(headers.hasPrefix("HTTP/1.1 200"))
        #expect(!headers.lowercased().contains("connection: close"))
        #expect(try connection.readToEnd() == "")
        #expect(live.server.statistics.keepAliveTimeouts.load(ordering: .relaxed) == 1)
        // A connection that keeps sending requests is not idle: three in a row on one connection.
        let busy = try RawConnection(port: live.port, timeoutSeconds: 30)
        for _ in 0..<3 { #expect(try Self.requestOK(on: busy).hasPrefix("HTTP/1.1 200")) }
    }

    /// Four addresses hold every slot of the server (32, one event loop): half of the connections
    /// kept alive after a request, half never sending one. Fails on the code before: the new
    /// client's connection waited in the listening backlog for the idle timeout (600 s), and its
    /// read timed out after 30 s.
    @Test func waitingConnectionsMakeRoomForANewClientNearTheLimit() throws {
        let (live, _) = try EventStreamTests.start {
            $0.threads = 1
            $0.maxConnections = 32
            $0.maxConnectionsPerIP = 8
            $0.keepAliveTimeoutSeconds = 600
            $0.idleTimeoutSeconds = 600
        }
        var held: [RawConnection] = []
        for address in 2...5 {
            for index in 0..<8 {
                let connection = try RawConnection(port: live.port, source: "127.0.0.\(address)", timeoutSeconds: 30)
                // Near the limit the server closes the oldest of them as new ones arrive: a request
                // may find its connection closed already.
                if index.isMultiple(of: 2) { _ = try? Self.requestOK(on: connection) }
                held.append(connection)
            }
        }
        for round in 0..<3 {
            let newcomer = try RawConnection(port: live.port, source: "127.0.0.\(10 + round)", timeoutSeconds: 30)
            #expect(try Self.requestOK(on: newcomer).hasPrefix("HTTP/1.1 200"))
        }
        #expect(live.server.statistics.reclaimedConnections.load(ordering: .relaxed) > 0)
        withExtendedLifetime(held) {}
    }

    /// With every connection busy (a request begun on each: nothing to reclaim) near the limit, an
    /// answer closes its connection. Fails on the code before: the answer kept the connection alive.
    @Test func anAnswerNearTheLimitClosesItsConnection() throws {
        let (live, _) = try EventStreamTests.start {
            $0.threads = 1
            $0.maxConnections = 32
            $0.maxConnectionsPerIP = 0
            $0.keepAliveTimeoutSeconds = 600
            $0.idleTimeoutSeconds = 600
        }
        // 28 (seven eighths of 32) requests whose header block never ends: each has begun, and
        // the next connection is one beyond what the loop keeps.
        var busy: [RawConnection] = []
        for _ in 0..<28 {
            let connection = try RawConnection(port: live.port, timeoutSeconds: 30)
            try connection.send("GET /ok HTTP/1.1\r\nHost: localhost\r\n")
            busy.append(connection)
        }
        #expect(eventually { live.server.statistics.inFlight == 28 })
        let connection = try RawConnection(port: live.port, timeoutSeconds: 30)
        let headers = try Self.requestOK(on: connection)
        #expect(headers.hasPrefix("HTTP/1.1 200"))
        #expect(headers.lowercased().contains("connection: close"))
        #expect(try connection.readToEnd() == "")
        busy.removeAll()
        #expect(eventually { live.server.statistics.openConnections == 0 })
        let calm = try RawConnection(port: live.port, timeoutSeconds: 30)
        #expect(!(try Self.requestOK(on: calm)).lowercased().contains("connection: close"))
    }

    /// A refused stream and a stream the server ends close their connections. Fails on the code
    /// before: both connections stayed open (the reads timed out).
    @Test func aRefusedStreamAndAnEndedStreamCloseTheirConnections() throws {
        let (live, opened) = try EventStreamTests.start {
            $0.maxEventStreamsPerIP = 1
            $0.eventHeartbeatSeconds = 3600
            $0.keepAliveTimeoutSeconds = 600
            $0.idleTimeoutSeconds = 600
        }
        let first = try RawConnection(port: live.port, timeoutSeconds: 30)
        try first.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try first.read(through: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(eventually { live.server.openEventStreams == 1 })
        let second = try RawConnection(port: live.port, timeoutSeconds: 30)
        try second.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let refused = try second.readToEnd()
        #expect(refused.hasPrefix("HTTP/1.1 429"))
        #expect(refused.lowercased().contains("connection: close"))
        try #require(opened.withLock { $0.first }).close()
        // The chunked body's last chunk, then the end of the connection.
        #expect(try first.readToEnd().hasSuffix("0\r\n\r\n"))
    }

    @Test func anIPv6ClientCountsByItsSlash64() throws {
        let one = try #require(IPAddress("2001:db8:1:2::1"))
        let other = try #require(IPAddress("2001:db8:1:2:ffff:ffff:ffff:9"))
        let elsewhere = try #require(IPAddress("2001:db8:1:3::1"))
        #expect(one.client == other.client)
        #expect(one.client != elsewhere.client)
        #expect(try #require(IPAddress("192.0.2.7")).client == IPAddress("192.0.2.7"))
        #expect(try #require(IPAddress("192.0.2.7")).client != IPAddress("192.0.2.8"))
        let limit = ConnectionsPerAddress(limit: 2)
        #expect(limit.admit(one.client))
        #expect(limit.admit(other.client))
        #expect(!limit.admit(IPAddress("2001:db8:1:2::77")?.client))
        #expect(limit.admit(elsewhere.client))
        #expect(ClientAddress(other).clientText == "2001:db8:1:2::")
    }
}
