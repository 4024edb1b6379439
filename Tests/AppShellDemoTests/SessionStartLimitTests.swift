import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// How fast one client may start sessions held in memory (issue 31, finding 2).
@Suite struct SessionStartLimitTests {
    /// The demo behind a trusted proxy (127.0.0.1), each client 3 sessions held in memory a minute.
    static func start() throws -> LiveServer {
        let app = try ShellAPITests.makeApp(splashDelay: 0, maxSessionsInMemory: nil) {
            $0.shell.newSessionsPerMinute = 3
        }
        var server = LiveServer.testConfiguration
        server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        return try LiveServer(configuration: server, responder: try app.makeResponder())
    }

    /// A visitor from `address`: its first request (no cookie), then the second, with the cookie
    /// (where its session is held in memory); returns the second's answer.
    static func visit(_ live: LiveServer, from address: String) throws -> TestResponse {
        let client = live.client()
        let from = [("X-Forwarded-For", address)]
        #expect(try client.get("/api/state", headers: from).status == 200)
        return try client.get("/api/state", headers: from)
    }

    /// Fails on the code before (the limiter was given the shell's clock in milliseconds as if
    /// seconds: 3 a minute were 3 every 60 ms, and the fourth, 500 ms later, was let in; found by
    /// the suites over TLS, whose handshakes made the visits slower): the limit counts real time.
    @Test func theLimitCountsSecondsOfTheShellsClock() throws {
        let now = Locked<Int64>(1_800_000_000_000)
        let app = try DemoServer(
            configuration: ShellAPITests.configuration(splashDelay: 0) { $0.shell.newSessionsPerMinute = 3 },
            clock: { now.withLock { $0 } })
        var server = LiveServer.testConfiguration
        server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        let live = try LiveServer(configuration: server, responder: try app.makeResponder())
        for _ in 1...3 { #expect(try Self.visit(live, from: "203.0.113.7").status == 200) }
        now.withLock { $0 += 500 }
        let refused = try Self.visit(live, from: "203.0.113.7")
        #expect(refused.status == 429)
        #expect(refused.headers["Retry-After"] == "20")
        // Twenty seconds later, one more.
        now.withLock { $0 += 20_000 }
        #expect(try Self.visit(live, from: "203.0.113.7").status == 200)
    }

    /// Fails on the code before: the fourth visitor's session was held like the others (200).
    @Test func oneClientStartsOnlySoManySessionsAMinute() throws {
        let live = try Self.start()
        for _ in 1...3 { #expect(try Self.visit(live, from: "203.0.113.7").status == 200) }
        let fourth = try Self.visit(live, from: "203.0.113.7")
        #expect(fourth.status == 429)
        #expect(Int(fourth.headers["Retry-After"] ?? "") ?? 0 >= 1)
        #expect(fourth.json["error"]?.stringValue?.hasPrefix("too many new sessions from your address") == true)
        // An IPv6 client counts by its /64; other clients start theirs.
        #expect(try Self.visit(live, from: "198.51.100.1").status == 200)
        for index in 1...3 { #expect(try Self.visit(live, from: "2001:db8:1:2::\(index)").status == 200) }
        #expect(try Self.visit(live, from: "2001:db8:1:2::99").status == 429)
        // A first request without a cookie holds nothing and is never refused.
        #expect(try live.client().get("/api/state", headers: [("X-Forwarded-For", "203.0.113.7")]).status == 200)
    }
}
