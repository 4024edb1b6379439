import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The login limits against a live server: behind a trusted proxy, per username, and the bound
/// on password checks at once.
@Suite struct LoginLimitTests {
    static func wrong(
        _ client: TestClient, from address: String? = nil, username: String = "demo"
    ) throws
        -> TestResponse
    {
        try client.postJSON(
            "/api/actions", "{\"action\": \"login\", \"username\": \"\(username)\", \"password\": \"wrong\"}",
            headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    static func right(_ client: TestClient, from address: String? = nil) throws -> TestResponse {
        try client.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#,
            headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    /// A session that has been shown the login screen.
    static func visitor(_ live: LiveServer, from address: String? = nil) throws -> TestClient {
        let client = live.client()
        _ = try client.get("/api/state", headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
        return client
    }

    @Test func behindATrustedProxyOneClientsFailuresDoNotBlockAnother() throws {
        let (_, live) = try AllowedHostsTests.start { $0.server.trustedProxies = try TrustedProxies(["127.0.0.1"]) }
        let attacker = try Self.visitor(live, from: "203.0.113.9")
        for _ in 1...5 { #expect(try Self.wrong(attacker, from: "203.0.113.9").status == 401) }
        #expect(try Self.right(attacker, from: "203.0.113.9").status == 429)
        // Another user behind the same proxy logs in.
        let user = try Self.visitor(live, from: "198.51.100.1")
        #expect(try Self.right(user, from: "198.51.100.1").status == 200)
        // The attacker's next session from its address is still refused.
        let again = try Self.visitor(live, from: "203.0.113.9")
        let refused = try Self.right(again, from: "203.0.113.9")
        #expect(refused.status == 429)
        #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 > 0)
    }

    @Test func anUntrustedPeersForwardedForIsIgnored() throws {
        let (_, live) = try AllowedHostsTests.start { $0.server.trustedProxies = try TrustedProxies(["10.0.0.0/8"]) }
        let attacker = try Self.visitor(live)
        for index in 1...5 { #expect(try Self.wrong(attacker, from: "203.0.113.\(index)").status == 401) }
        // Claiming yet another address does not make a fresh session from the same peer a new client.
        let fresh = try Self.visitor(live, from: "198.51.100.77")
        #expect(try Self.right(fresh, from: "198.51.100.77").status == 429)
    }

    @Test func twoIPv6AddressesInOneSlash64ShareTheLimit() throws {
        let (_, live) = try AllowedHostsTests.start { $0.server.trustedProxies = try TrustedProxies(["127.0.0.1"]) }
        for index in 1...5 {
            let client = try Self.visitor(live, from: "2001:db8:1:2::\(index)")
            #expect(try Self.wrong(client, from: "2001:db8:1:2::\(index)").status == 401)
        }
        let sameNetwork = try Self.visitor(live, from: "2001:db8:1:2:aaaa::1")
        #expect(try Self.right(sameNetwork, from: "2001:db8:1:2:aaaa::1").status == 429)
        let otherNetwork = try Self.visitor(live, from: "2001:db8:1:3::1")
        #expect(try Self.right(otherNetwork, from: "2001:db8:1:3::1").status == 200)
    }

    @Test func manyClientsGuessingOneUsernameBlockItButNotForItsKnownClient() throws {
        let (_, live) = try AllowedHostsTests.start { $0.server.trustedProxies = try TrustedProxies(["127.0.0.1"]) }
        // The real user logged in before from their usual address, then logged out.
        let owner = try Self.visitor(live, from: "192.0.2.10")
        #expect(try Self.right(owner, from: "192.0.2.10").status == 200)
        _ = try owner.postJSON(
            "/api/actions", #"{"action": "logout"}"#, headers: [("X-Forwarded-For", "192.0.2.10")])
        for client in 1...4 {
            let address = "203.0.113.\(client)"
            let guesser = try Self.visitor(live, from: address)
            for _ in 1...5 { #expect(try Self.wrong(guesser, from: address).status == 401) }
        }
        let newcomer = try Self.visitor(live, from: "198.51.100.1")
        #expect(try Self.right(newcomer, from: "198.51.100.1").status == 429)
        #expect(try Self.right(owner, from: "192.0.2.10").status == 200)
    }

    @Test func moreLoginsAtOnceThanSlotsGet503WithRetryAfter() throws {
        let (app, live) = try AllowedHostsTests.start {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 1
        }
        let client = try Self.visitor(live)
        // The queue's only place is taken.
        let place = try #require(app.server.accounts.passwordChecks.reserve())
        let busy = try Self.right(client)
        #expect(busy.status == 503)
        #expect(busy.headers["Retry-After"] == "1")
        #expect(busy.json["error"] == "The server is busy checking other logins. Try again in a moment.")
        #expect(busy.json["defaults"] == [:])
        place.cancel()
        #expect(try Self.right(client).status == 200)
    }
}
