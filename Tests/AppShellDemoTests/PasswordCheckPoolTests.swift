import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// Password checks run off libmicrohttpd's epoll threads: a login's request is suspended while
/// its check runs on the password-check pool, and the server keeps answering meanwhile.
@Suite struct PasswordCheckPoolTests {
    /// A password verifier that waits until a test lets it go, and counts the checks it began.
    final class HeldVerifier: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let started = Locked(0)
        private let released = Locked(false)

        /// Checks begun so far.
        var began: Int { started.withLock { $0 } }

        /// Lets every check (running and to come) finish.
        func release() {
            released.withLock { $0 = true }
            for _ in 0..<64 { gate.signal() }
        }

        /// Waits (while held) and then answers as `PasswordHash.verify` would for the demo's user.
        func verify(_ password: String, _ hash: String) -> Bool {
            started.withLock { $0 += 1 }
            if !released.withLock({ $0 }) { gate.wait() }
            return password == "appshell"
        }
    }

    /// A demo server with ONE epoll thread whose password checks wait for `verifier`.
    static func start(
        _ verifier: HeldVerifier, _ edit: (inout DemoConfiguration) -> Void = { _ in }
    ) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        edit(&configuration)
        let app = try DemoServer(configuration: configuration, verifyPassword: verifier.verify)
        var server = LiveServer.testConfiguration
        server.threads = 1
        return (app, try LiveServer(configuration: server, responder: try app.makeResponder()))
    }

    /// Logs `client` in on another thread; the answer arrives in `answer`.
    static func loginInBackground(_ client: TestClient, password: String = "appshell") -> Locked<TestResponse?> {
        let answer = Locked<TestResponse?>(nil)
        Thread.detachNewThread {
            let response = try? client.postJSON(
                "/api/actions", #"{"action": "login", "username": "demo", "password": "\#(password)"}"#)
            answer.withLock { $0 = response }
        }
        return answer
    }

    @Test func aReadIsAnsweredWhileALoginIsCheckedOnTheOnlyEpollThread() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (_, live) = try Self.start(verifier)
        let client = live.client()
        _ = try client.get("/api/state")
        let cookie = try #require(client.cookies.first).value
        let name = try #require(client.cookies.first).key
        let answer = Self.loginInBackground(client)
        #expect(eventually { verifier.began == 1 })
        // The only epoll thread is free: the same session's state and another visitor's are read.
        let reader = live.client()
        let same = try reader.get("/api/state", headers: [("Cookie", "\(name)=\(cookie)")])
        #expect(same.status == 200)
        #expect(same.json["screen"] == "login")
        #expect(try live.client().get("/api/state").status == 200)
        #expect(answer.withLock { $0 } == nil)
        verifier.release()
        #expect(eventually { answer.withLock { $0 } != nil })
        let login = try #require(answer.withLock { $0 })
        #expect(login.status == 200)
        #expect(login.json["screen"] == "main")
        // The id was rotated: the answer carries the new cookie, and the old id names nothing.
        #expect(login.headers["Set-Cookie"]?.hasPrefix("\(name)=") == true)
        #expect(client.cookies[name] != cookie)
        #expect(try client.get("/api/state").json["screen"] == "main")
    }

    @Test func aFullQueueAnswers503WithRetryAfterAtOnceAndChangesNothing() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Self.start(verifier) {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 1
        }
        // One login is checked (the only thread), another waits (the only place in the queue).
        let first = live.client()
        _ = try first.get("/api/state")
        let checked = Self.loginInBackground(first)
        #expect(eventually { verifier.began == 1 })
        let second = live.client()
        _ = try second.get("/api/state")
        let queued = Self.loginInBackground(second)
        #expect(eventually { app.server.accounts.passwordChecks.queued == 1 })
        let third = live.client()
        let before = try third.get("/api/state")
        let busy = try third.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(busy.status == 503)
        #expect(busy.headers["Retry-After"] == "1")
        #expect(busy.headers["Set-Cookie"] == nil)
        #expect(busy.json["defaults"] == [:])
        #expect(busy.json["screen"] == "login")
        #expect(verifier.began == 1)
        let after = try third.get("/api/state")
        #expect(after.json["defaults"] == before.json["defaults"])
        #expect(after.json["screen"] == "login")
        verifier.release()
        #expect(eventually { checked.withLock { $0 } != nil && queued.withLock { $0 } != nil })
        #expect(checked.withLock { $0?.status } == 200)
        #expect(queued.withLock { $0?.status } == 200)
        // Nothing was counted against the refused one: it logs in now.
        #expect(
            try third.postJSON(
                "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#
            ).status == 200)
    }

    @Test func aSecondLoginOfTheSameSessionWhileOneIsCheckedIsRefused() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (_, live) = try Self.start(verifier)
        let client = live.client()
        _ = try client.get("/api/state")
        let cookie = try #require(client.cookies.first)
        let first = Self.loginInBackground(client, password: "wrong")
        #expect(eventually { verifier.began == 1 })
        let again = try live.client().postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#,
            headers: [("Cookie", "\(cookie.key)=\(cookie.value)")])
        #expect(again.status == 429)
        #expect(verifier.began == 1)
        verifier.release()
        #expect(eventually { first.withLock { $0 } != nil })
        #expect(first.withLock { $0?.status } == 401)
    }

    @Test func shutdownWithLoginsInFlightReturnsAndAnswersThem() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Self.start(verifier) {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 4
        }
        var answers: [Locked<TestResponse?>] = []
        for _ in 0..<3 {
            let client = live.client()
            _ = try client.get("/api/state")
            answers.append(Self.loginInBackground(client))
        }
        #expect(eventually { verifier.began == 1 && app.server.accounts.passwordChecks.queued == 2 })
        // The running check (held) and the queued ones are waited for up to the timeout, then
        // answered 503.
        #expect(live.stop(timeoutSeconds: 1) == false)
        #expect(eventually { answers.allSatisfy { $0.withLock { $0 } != nil } })
        for answer in answers {
            #expect(answer.withLock { $0?.status } == 503)
        }
        // The queued checks never run.
        verifier.release()
        #expect(eventually { app.server.accounts.passwordChecks.queued == 0 })
        #expect(eventually { app.server.accounts.passwordChecks.running == 0 })
        #expect(verifier.began == 1)
    }

    /// A login still queued for a check when the shutdown begins is in flight: it is checked
    /// and answered as usual within the timeout (it was answered 503 at once).
    @Test func aLoginQueuedWhenShutdownBeginsIsCheckedAndAnswered() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Self.start(verifier) { $0.accounts.passwordCheckThreads = 1 }
        var answers: [Locked<TestResponse?>] = []
        for _ in 0..<2 {
            let client = live.client()
            _ = try client.get("/api/state")
            answers.append(Self.loginInBackground(client))
        }
        #expect(eventually { verifier.began == 1 && app.server.accounts.passwordChecks.queued == 1 })
        Thread.detachNewThread {
            usleep(200_000)
            verifier.release()
        }
        #expect(live.stop(timeoutSeconds: 10))
        // The clients read their answers on their own threads.
        #expect(eventually { answers.allSatisfy { $0.withLock { $0 } != nil } })
        for answer in answers {
            #expect(answer.withLock { $0?.status } == 200)
        }
        #expect(verifier.began == 2)
    }

    @Test func aLoginCheckedDuringShutdownIsAnsweredAsUsual() throws {
        let verifier = HeldVerifier()
        let (_, live) = try Self.start(verifier)
        let client = live.client()
        _ = try client.get("/api/state")
        let answer = Self.loginInBackground(client)
        #expect(eventually { verifier.began == 1 })
        Thread.detachNewThread {
            usleep(200_000)
            verifier.release()
        }
        #expect(live.stop(timeoutSeconds: 10))
        #expect(eventually { answer.withLock { $0 } != nil })
        let login = try #require(answer.withLock { $0 })
        #expect(login.status == 200)
        #expect(login.json["screen"] == "main")
    }

    /// Attempts being checked count against the limits at once: one client opening many sessions
    /// and sending a wrong password from each cannot have more checked together than its limit
    /// allows (5 per username and client), as it could when only finished checks counted.
    @Test func attemptsBeingCheckedCountAgainstTheLimits() throws {
        let verifier = HeldVerifier()
        defer { verifier.release() }
        let (_, live) = try Self.start(verifier) { $0.accounts.passwordCheckThreads = 8 }
        var answers: [Locked<TestResponse?>] = []
        for _ in 0..<8 {
            let client = live.client()
            _ = try client.get("/api/state")
            answers.append(Self.loginInBackground(client, password: "wrong"))
        }
        // Five are admitted and checked; the other three are refused at once, unchecked.
        #expect(eventually { answers.filter { $0.withLock { $0 }?.status == 429 }.count == 3 })
        #expect(eventually { verifier.began == 5 })
        verifier.release()
        #expect(eventually { answers.allSatisfy { $0.withLock { $0 } != nil } })
        let statuses = answers.compactMap { $0.withLock { $0 }?.status }.sorted()
        #expect(statuses == [401, 401, 401, 401, 401, 429, 429, 429])
        #expect(verifier.began == 5)
        // The failures stay counted: a ninth attempt, even with the right password, is refused.
        let late = live.client()
        _ = try late.get("/api/state")
        #expect(
            try late.postJSON("/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
                .status == 429)
    }
}
