import AppShellAuth
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

@testable import AppShellConcurrency

/// One client network cannot fill the queue of password checks every login waits in (issue 31,
/// finding 3): it may have `passwordChecksPerClient` checks queued or running, other networks
/// keep theirs.
@Suite struct PasswordCheckQuotaTests {
    /// A demo server behind a trusted proxy (127.0.0.1) whose checks wait for `verifier`: two per
    /// network, sixteen in the queue.
    static func start(_ verifier: PasswordCheckPoolTests.HeldVerifier) throws -> (DemoServer, LiveServer) {
        let configuration = try ShellAPITests.configuration {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 16
            $0.accounts.passwordChecksPerClient = 2
        }
        let app = try DemoServer(configuration: configuration, verifyPassword: verifier.verify)
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
        let quota = app.server.accounts.checkQuota
        let first = try Self.login(live, from: "203.0.113.1")
        let second = try Self.login(live, from: "203.0.113.2")
        #expect(eventually { quota.checks(for: "203.0.113.77") == 2 })
        // The same /24 again: refused at once, with the words the form shows.
        let third = try LoginLimitTests.right(
            try LoginLimitTests.visitor(live, from: "203.0.113.3"), from: "203.0.113.3")
        #expect(third.status == 429)
        #expect(third.headers["Retry-After"] == "1")
        #expect(third.json["error"] == "Too many logins from your network are being checked. Wait for their answers.")
        // Another network (and an IPv6 one) is queued as usual.
        let other = try Self.login(live, from: "198.51.100.7")
        let ipv6 = try Self.login(live, from: "2001:db8:1:2::5")
        #expect(eventually { quota.checks(for: "198.51.100.1") == 1 })
        #expect(eventually { quota.checks(for: "2001:db8:1:2:ffff::1") == 1 })
        verifier.release()
        for answer in [first, second, other, ipv6] {
            #expect(eventually { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0?.status } == 200)
        }
        // Every place was given back.
        #expect(eventually { quota.checks(for: "203.0.113.1") == 0 })
        #expect(quota.checks(for: "198.51.100.7") == 0)
        #expect(quota.checks(for: "2001:db8:1:2::5") == 0)
    }

    /// Records the passwords it is asked to check, in order; the first check waits until `release`.
    final class RecordingVerifier: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let checked = Locked<[String]>([])

        /// The passwords checked (or being checked), in the order their checks began.
        var passwords: [String] { checked.withLock { $0 } }

        /// Lets the first check finish.
        func release() { gate.signal() }

        /// Records `password`; the first check waits for `release`. Every password is wrong.
        func verify(_ password: String, _ hash: String) -> Bool {
            let first = checked.withLock { checked in
                checked.append(password)
                return checked.count == 1
            }
            if first { gate.wait() }
            return false
        }
    }

    /// Fails on the code before: the queue was first come, first served, and the other network's
    /// check ran after both of the first network's (`held, a2, a3, b1`).
    @Test func networksQueuedChecksAreServedInTurns() throws {
        let verifier = RecordingVerifier()
        let configuration = try ShellAPITests.configuration {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 16
            $0.accounts.passwordChecksPerClient = 3
        }
        let app = try DemoServer(configuration: configuration, verifyPassword: verifier.verify)
        var server = LiveServer.testConfiguration
        server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        let live = try LiveServer(configuration: server, responder: try app.makeResponder())
        let pool = app.server.accounts.passwordChecks
        var answers: [Locked<TestResponse?>] = []
        // One login of each, each queued before the next is sent: the first holds the one thread.
        for (number, (password, address)) in [
            ("held", "203.0.113.1"), ("a2", "203.0.113.2"), ("a3", "203.0.113.3"), ("b1", "198.51.100.7"),
        ].enumerated() {
            let client = try LoginLimitTests.visitor(live, from: address)
            let answer = Locked<TestResponse?>(nil)
            Thread.detachNewThread {
                let response = try? client.postJSON(
                    "/api/actions", #"{"action": "login", "username": "demo", "password": "\#(password)"}"#,
                    headers: [("X-Forwarded-For", address)])
                answer.withLock { $0 = response }
            }
            answers.append(answer)
            #expect(
                eventually {
                    number == 0 ? verifier.passwords == ["held"] : pool.locked { $0.waiting } == number
                })
        }
        verifier.release()
        for answer in answers {
            #expect(eventually { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0?.status } == 401)
        }
        #expect(verifier.passwords == ["held", "a2", "b1", "a3"])
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

    /// Fails on the code before (no `giveBack`: the place stayed taken for as long as the closure
    /// of the check that held it, which could outlive its answer — KillDuringWritesTests' clients,
    /// logging in again at once, were refused 429 now and then).
    @Test func aPlaceGivenBackIsFreeWhileStillHeldAndOnlyOnce() throws {
        let quota = PasswordCheckQuota(perClient: 1)
        let first = try #require(quota.take(for: "192.0.2.1"))
        first.giveBack()
        #expect(quota.checks(for: "192.0.2.1") == 0)
        let second = try #require(quota.take(for: "192.0.2.2"))
        // Given back twice, or let go after, it frees nothing more: the second keeps its place.
        first.giveBack()
        withExtendedLifetime(first) {}
        #expect(quota.checks(for: "192.0.2.1") == 1)
        #expect(quota.take(for: "192.0.2.3") == nil)
        withExtendedLifetime(second) {}
    }
}
