import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellTesting
import Testing

/// A login is an action that awaits its password check: when its client goes away, the check is
/// dropped if it has not begun, nothing of it is applied, and the session can log in again.
@Suite struct LoginCancellationTests {
    typealias Pool = PasswordCheckPoolTests

    /// Sends a login with `client`'s cookies on a connection of its own, and leaves it waiting.
    static func loginLeftWaiting(_ client: TestClient, port: Int) throws -> RawConnection {
        let cookie = client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let body = #"{"action": "login", "username": "demo", "password": "appshell"}"#
        let connection = try RawConnection(port: port)
        try connection.send(
            "POST /api/actions HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return connection
    }

    @Test func aLoginWhoseClientLeavesWhileItsCheckRunsLetsTheSessionLogInAgain() throws {
        let verifier = Pool.HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Pool.start(verifier)
        let client = live.client()
        _ = try client.get("/api/state")
        do {
            let connection = try Self.loginLeftWaiting(client, port: live.port)
            #expect(eventually { verifier.began == 1 })
            // Its answer waits (the check may begin before the request is counted as waiting).
            #expect(eventually { live.server.waitingDeferredResponses == 1 })
            withExtendedLifetime(connection) {}
        }  // the client goes away while its password is checked
        #expect(eventually { live.server.waitingDeferredResponses == 0 })
        verifier.release()
        // Until then the check is under way (its thread, at a lower priority, may not have run
        // yet on a busy machine), and another login of the session is refused with 429.
        #expect(eventually { app.server.accounts.passwordChecks.running == 0 })
        // Its check ran to its end, but nothing of it was applied: the session is still logged
        // out, and its next login is checked (not refused as "already being checked").
        #expect(eventually { (try? client.get("/api/state"))?.json["screen"]?.stringValue == "login" })
        let again = try client.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(again.status == 200, "\(again.json["error"] ?? .null)")
    }

    @Test func aLoginWhoseClientLeavesWhileItsCheckIsQueuedIsNeverChecked() throws {
        let verifier = Pool.HeldVerifier()
        defer { verifier.release() }
        let (app, live) = try Pool.start(verifier) { $0.accounts.passwordCheckThreads = 1 }
        let first = live.client()
        _ = try first.get("/api/state")
        let firstAnswer = Pool.loginInBackground(first)
        #expect(eventually { verifier.began == 1 })
        let second = live.client()
        _ = try second.get("/api/state")
        do {
            let connection = try Self.loginLeftWaiting(second, port: live.port)
            #expect(eventually { app.server.accounts.passwordChecks.queued == 1 })
            // Its answer waits too (its place in the queue is taken before that): only then does
            // the count going back to one say that its client's leaving was seen.
            #expect(eventually { live.server.waitingDeferredResponses == 2 })
            withExtendedLifetime(connection) {}
        }  // the second client goes away while its check waits in the queue
        #expect(eventually { live.server.waitingDeferredResponses == 1 })
        verifier.release()
        #expect(eventually { firstAnswer.withLock { $0?.status } == 200 })
        #expect(eventually { app.server.accounts.passwordChecks.queued == 0 })
        #expect(eventually { app.server.accounts.passwordChecks.running == 0 })
        #expect(verifier.began == 1)
        #expect(try second.get("/api/state").json["screen"]?.stringValue == "login")
    }
}
