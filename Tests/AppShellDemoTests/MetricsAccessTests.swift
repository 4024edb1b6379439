import AppShellDemo
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Who reads `GET /metrics` (issue 31, finding 8): loopback clients, or anyone with the metrics
/// token when one is set.
@Suite struct MetricsAccessTests {
    /// The demo behind a trusted proxy (127.0.0.1), so that a test can be any client, with
    /// `token` as its `metricsToken`.
    static func start(token: String? = nil) throws -> LiveServer {
        let app = try ShellAPITests.makeApp(splashDelay: 0, maxSessionsInMemory: nil) { $0.shell.metricsToken = token }
        var server = LiveServer.testConfiguration
        server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        return try LiveServer(configuration: server, responder: try app.makeResponder(), statistics: app.statistics)
    }

    /// Fails on the code before: the client from elsewhere read the metrics (200).
    @Test func withoutATokenOnlyLoopbackClientsReadThem() throws {
        let live = try Self.start()
        #expect(try live.client().get("/metrics").status == 200)
        #expect(try live.client().get("/metrics", headers: [("X-Forwarded-For", "127.0.0.9")]).status == 200)
        let elsewhere = try live.client().get("/metrics", headers: [("X-Forwarded-For", "203.0.113.5")])
        #expect(elsewhere.status == 403)
        #expect(elsewhere.json["error"]?.stringValue?.contains("metricsToken") == true)
        #expect(!elsewhere.text.contains("appshell_"))
    }

    /// Fails on the code before: every request read the metrics (200).
    @Test func withATokenOnlyItsHoldersReadThem() throws {
        let token = "s3cret-metrics-token-0123456789"
        let live = try Self.start(token: token)
        let from = ("X-Forwarded-For", "203.0.113.5")
        let without = try live.client().get("/metrics", headers: [from])
        #expect(without.status == 401)
        #expect(without.headers["WWW-Authenticate"] == "Bearer realm=\"metrics\"")
        #expect(try live.client().get("/metrics").status == 401)
        let wrong = try live.client().get("/metrics", headers: [from, ("Authorization", "Bearer not-\(token)")])
        #expect(wrong.status == 401)
        let right = try live.client().get("/metrics", headers: [from, ("Authorization", "Bearer \(token)")])
        #expect(right.status == 200)
        #expect(right.text.contains("appshell_http_requests_completed_total"))
    }
}
