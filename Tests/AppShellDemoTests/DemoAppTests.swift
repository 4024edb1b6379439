import AppShell
import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// The demo app's own routes, in process with the memory store.
@Suite struct DemoAppTests {
    static func start() throws -> (DemoServer, LiveServer) {
        var configuration = DemoConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    @Test func metricsAreTextAndMakeNoSession() throws {
        let (app, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/healthz")
        let metrics = try client.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.headers["Set-Cookie"] == nil)
        let lines = metrics.text.split(separator: "\n")
        #expect(lines.contains("appshell_sessions_in_memory 0"))
        #expect(lines.contains("appshell_sessions_created_total 0"))
        #expect(lines.contains { $0.hasPrefix("appshell_http_requests_completed_total ") })
        #expect(app.sessions.count == 0)
        #expect(client.cookies.isEmpty)
    }

    @Test func theCookiePolicyFollowsTheConfiguration() throws {
        var configuration = DemoConfiguration()
        configuration.store = .memory
        configuration.cookieName = "sid"
        configuration.secureCookies = true
        let app = try DemoServer(configuration: configuration)
        #expect(app.cookie.name == "__Host-sid")
        #expect(app.cookie.header(value: "v") == "__Host-sid=v; Path=/; HttpOnly; SameSite=Lax; Secure")
    }

    @Test func thePasswordCheckPoolTakesTheConfiguredThreadsAtItsNice() throws {
        var configuration = DemoConfiguration()
        configuration.store = .memory
        configuration.accounts.passwordCheckThreads = 2
        let app = try DemoServer(configuration: configuration)
        #expect(app.server.accounts.passwordChecks.threads == 2)
        #expect(app.server.accounts.passwordChecks.nice == Accounts.passwordCheckNice)
    }
}
