import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The real process logs each failed login, and the lockout it causes, as a `security:` line on
/// standard error: the username and the client (behind a trusted proxy, the forwarded one), never
/// the password, with a username that holds a line break unable to forge a line.
@Suite struct SecurityLogTests {
    @Test func failedLoginsAndTheLockoutAreLogged() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_STORE": "memory", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_TRUSTED_PROXIES": "127.0.0.1",
        ])
        let client = TestClient(port: try running.port())
        let forwarded = [("X-Forwarded-For", "203.0.113.7")]
        for _ in 0..<50 where try client.get("/api/state", headers: forwarded).json["screen"]?.stringValue != "login" {
            usleep(100_000)
        }
        let login = #"{"action":"login","username":"mallory\nappshell: security: forged","password":"hunter2-wrong"}"#
        for _ in 1...5 { #expect(try client.postJSON("/api/actions", login, headers: forwarded).status == 401) }
        #expect(try client.postJSON("/api/actions", login, headers: forwarded).status == 429)
        running.terminate()
        #expect(running.waitForExit() == 0)
        let lines = running.errorText.split(separator: "\n").map(String.init)
        let username = #"username="mallory\nappshell: security: forged""#
        let failed = lines.filter { $0.hasPrefix("appshell: security: login failed ") }
        #expect(failed.count == 5, "\(lines)")
        #expect(failed.allSatisfy { $0.contains(username) && $0.contains(#"client="203.0.113.7""#) })
        let lockouts = lines.filter { $0.hasPrefix("appshell: security: login lockout ") }
        #expect(lockouts.count == 1, "\(lines)")
        #expect(lockouts.first?.contains(#"limits="session, username and client""#) == true, "\(lockouts)")
        #expect(!lines.contains { $0.contains("hunter2") })
        #expect(!lines.contains { $0.hasPrefix("appshell: security: forged") })
    }
}
