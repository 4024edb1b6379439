import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// DNS rebinding: a request for a host the server does not serve is refused before anything runs.
@Suite struct AllowedHostsTests {
    /// The shipped config.json with the memory store, changed by `edit`; the server gets the
    /// configuration's HTTP settings (allowed hosts, trusted proxies).
    static func start(_ edit: (inout DemoConfiguration) throws -> Void = { _ in }) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        try edit(&configuration)
        let app = try DemoServer(configuration: configuration)
        var server = LiveServer.testConfiguration
        server.allowedHosts = configuration.server.allowedHosts
        server.trustedProxies = configuration.server.trustedProxies
        return (app, try LiveServer(configuration: server, responder: try app.makeResponder()))
    }

    @Test func aLoginForAForeignHostWithAMatchingOriginIsRefused() throws {
        let (app, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        // A page at http://rebound.example:port whose name now resolves to 127.0.0.1.
        let foreign = "rebound.example:\(live.port)"
        let login = try client.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#,
            headers: [("Host", foreign), ("Origin", "http://\(foreign)")])
        #expect(login.status == 421)
        #expect(login.json["error"]?.stringValue?.contains("rebound.example") == true)
        #expect(login.headers["Set-Cookie"] == nil)
        let state = try client.get("/api/state").json
        #expect(state["screen"] != "main")
        #expect(state["defaults"] == [:])
        _ = app
    }

    @Test(arguments: ["/healthz", "/api/state", "/login", "/app.css", "/nowhere"])
    func everyRouteRefusesAForeignHost(path: String) throws {
        let (app, live) = try Self.start()
        let client = live.client()
        let answer = try client.get(path, headers: [("Host", "evil.example")])
        #expect(answer.status == 421)
        #expect(answer.headers["Set-Cookie"] == nil)
        #expect(app.sessions.count == 0)
    }

    @Test(arguments: [
        "localhost", "localhost:8080", "LOCALHOST.", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8080",
        "10.1.2.3:8080", "[2001:db8::7]",
    ])
    func loopbackNamesAndAddressesAreServed(host: String) throws {
        let (_, live) = try Self.start()
        let answer = try live.client().get("/healthz", headers: [("Host", host)])
        #expect(answer.status == 200)
    }

    @Test func configuredNamesAndDomainsAreServed() throws {
        let (_, live) = try Self.start {
            $0.server.allowedHosts = try AllowedHosts(["app.example.com", ".example.org", "*.example.net"])
        }
        let client = live.client()
        for host in ["app.example.com", "App.Example.Com:443", "example.org", "a.b.example.org", "x.example.net"] {
            #expect(try client.get("/healthz", headers: [("Host", host)]).status == 200, "\(host)")
        }
        for host in ["example.com", "app.example.com.evil", "evilexample.org", "example.net", "app_example.com"] {
            #expect(try client.get("/healthz", headers: [("Host", host)]).status == 421, "\(host)")
        }
    }

    @Test func aRequestWithoutHostIsServedAndTwoHostsAre400() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        // HTTP/1.0 may omit Host: no browser does, so no rebinding page can.
        let old = try client.raw(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
        #expect(old.hasPrefix("HTTP/1.0 200") || old.hasPrefix("HTTP/1.1 200"))
        let twice = try client.raw(
            Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n".utf8))
        #expect(twice.hasPrefix("HTTP/1.1 400"))
    }
}
