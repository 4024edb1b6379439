import AppShellAuth
import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// One client network cannot fill the queue of password checks every login waits in (issue 31,
/// finding 3): it may have `passwordChecksPerClient` checks queued or running, other networks
/// keep theirs.
@Suite struct PasswordCheckQuotaTests {
    /// A demo server behind a trusted proxy (127.0.0.1) whose checks wait for `verifier`: two per
    /// network, sixteen in the queue.
    static func start(_ verifier: PasswordCheckPoolTests.HeldVerifier) throws -> (DemoApp, LiveServer) {
        let configuration = try ShellAPITests.configuration {
            $0.passwordCheckThreads = 1
            $0.passwordCheckQueue = 16
            $0.passwordChecksPerClient = 2
        }
        let app = try DemoApp(configuration: configuration, verifyPassword: verifier.verify)
        var server = LiveServer.testConfiguration
        server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        return (app, try LiveServer(configuration: server, responder: try app.makeResponder()))
    }

    /// Logs a new visitor in from `address` on another thread; the answer arrives in the result.
    static func login(_ live: LiveServer, from address: String) throws -> Locked<TestResponse?> {
        let client = try LoginLimitTests.visitor(live, from: address)
        let answer = Locked<TestResponse?>(nil)
        Thread.detachNewThread {
            let response = try? LoginLimitTests.right(client, from: address)
            answer.withLock { $0 = response }
        }
        return answer
    }

    /// Fails on the code before: the third login of the network was queued like the others.
    @Test func aNetworkGetsAFewChecksAtOnceAndOthersKeepTheirs() throws {
        let verifier = PasswordCheckPoolTests.HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Self.start(verifier)
        let quota = app.environment.checkQuota
        let first = try Self.login(live, from: "203.0.113.1")
        let second = try Self.login(live, from: "203.0.113.2")
        #expect(PasswordCheckPoolTests.eventually { quota.checks(for: "203.0.113.77") == 2 })
        // The same /24 again: refused at once, with the words the form shows.
        let third = try LoginLimitTests.right(
            try LoginLimitTests.visitor(live, from: "203.0.113.3"), from: "203.0.113.3")
        #expect(third.status == 429)
        #expect(third.headers["Retry-After"] == "1")
        #expect(third.json["error"] == "Too many logins from your network are being checked. Wait for their answers.")
        // Another network (and an IPv6 one) is queued as usual.
        let other = try Self.login(live, from: "198.51.100.7")
        let ipv6 = try Self.login(live, from: "2001:db8:1:2::5")
        #expect(PasswordCheckPoolTests.eventually { quota.checks(for: "198.51.100.1") == 1 })
        #expect(PasswordCheckPoolTests.eventually { quota.checks(for: "2001:db8:1:2:ffff::1") == 1 })
        verifier.release()
        for answer in [first, second, other, ipv6] {
            #expect(PasswordCheckPoolTests.eventually { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0?.status } == 200)
        }
        // Every place was given back.
        #expect(PasswordCheckPoolTests.eventually { quota.checks(for: "203.0.113.1") == 0 })
        #expect(quota.checks(for: "198.51.100.7") == 0)
        #expect(quota.checks(for: "2001:db8:1:2::5") == 0)
    }

    @Test func aClientIsItsNetwork() {
        #expect(PasswordCheckQuota.network(of: "192.0.2.77") == "192.0.2.0/24")
        #expect(PasswordCheckQuota.network(of: "::ffff:192.0.2.5") == "192.0.2.0/24")
        #expect(PasswordCheckQuota.network(of: "2001:db8:1:2::5") == "2001:db8:1:2::/64")
        #expect(PasswordCheckQuota.network(of: "not an address") == "not an address")
    }

    @Test func aPlaceIsGivenBackWhenLetGo() {
        let quota = PasswordCheckQuota(perClient: 1)
        var place = quota.take(for: "192.0.2.1")
        #expect(place != nil)
        #expect(quota.take(for: "192.0.2.200") == nil)
        place = nil
        #expect(quota.take(for: "192.0.2.200") != nil)
        withExtendedLifetime(place) {}
    }
}
