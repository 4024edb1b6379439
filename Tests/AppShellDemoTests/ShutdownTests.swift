import AppShellConcurrency
import AppShellTesting
import Foundation
import Testing

/// SIGTERM while pages keep their event streams open and reopen them as soon as they end, as
/// EventSource does: the `appshell` process still exits 0, promptly (libmicrohttpd 0.9.75 aborts
/// the process when it is stopped with a connection still suspended).
@Suite struct ShutdownTests {
    @Test func sigtermWithOpenAndReconnectingStreamsExits0() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_SHUTDOWN_TIMEOUT_SECONDS": "5",
        ])
        let port = try running.port()
        // Six pages of one session, like six tabs.
        let client = TestClient(port: port)
        #expect(try client.get("/api/state").status == 200)
        let cookie = client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let stop = Locked(false)
        let opened = Locked(0)
        let pages = DispatchGroup()
        for _ in 0..<6 {
            pages.enter()
            Thread.detachNewThread {
                defer { pages.leave() }
                // Reopen on the same connection when the stream ends, on a new one when it closes.
                while !stop.withLock({ $0 }) {
                    guard let connection = try? RawConnection(port: port) else { return }
                    while !stop.withLock({ $0 }) {
                        guard
                            (try? connection.send(
                                "GET /api/events HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n\r\n")) != nil,
                            let head = try? connection.read(through: "\r\n\r\n")
                        else { break }
                        if head.hasPrefix("HTTP/1.1 200") { opened.withLock { $0 += 1 } }
                        guard (try? connection.read(through: "0\r\n\r\n")) != nil else { break }
                    }
                }
            }
        }
        #expect(eventually { opened.withLock { $0 } >= 6 })

        running.terminate()
        let status = running.waitForExit()
        stop.withLock { $0 = true }
        pages.wait()
        #expect(status == 0, "exit status \(status); stderr: \(running.errorText)")
        // Promptly: every request, the streams included, ended within the grace period (a stream
        // left open would hold the shutdown to its end and report false).
        #expect(running.outputText.contains("\"inFlightFinished\":true"))
    }

    /// Logins waiting for the password-check thread are in flight like any other request: they
    /// are checked and answered within the grace period (they were answered 503 at once).
    @Test func sigtermWithLoginsBeingCheckedAndQueuedAnswersEachOne() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            // A grace period that is only a bound (the exit follows the last answer): sixteen
            // Argon2id checks on one thread took more than 30 s at a load average of 19.
            "APPSHELL_SHUTDOWN_TIMEOUT_SECONDS": "600", "APPSHELL_PASSWORD_CHECK_THREADS": "1",
            "APPSHELL_PASSWORD_CHECK_QUEUE": "64",
        ])
        let port = try running.port()
        // Eight sessions (enough for one check running and others queued; each Argon2id check
        // costs seconds on a loaded machine), each with its state read first (so none is left
        // out by a slow start).
        let logins = 8
        let clients = (0..<logins).map { _ in TestClient(port: port) }
        for client in clients { #expect(try client.get("/api/state").status == 200) }
        // They log in at once: one password is checked, the others wait in the queue.
        let statuses = Locked<[Int]>([])
        let sent = DispatchGroup()
        for client in clients {
            sent.enter()
            Thread.detachNewThread {
                defer { sent.leave() }
                let status =
                    (try? client.postJSON(
                        "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#))?
                    .status ?? 0
                statuses.withLock { $0.append(status) }
            }
        }
        // SIGTERM once every login is being checked, queued or answered, with some still queued (a
        // fixed pause raced the threads' start on a busy machine: fewer than all had been sent).
        let observer = TestClient(port: port)
        let held = eventually {
            let gauges = Self.gauges(observer)
            let running = gauges["appshell_password_checks_running"] ?? 0
            let queued = gauges["appshell_password_checks_queued"] ?? 0
            return queued >= 1 && running + queued + statuses.withLock({ $0.count }) == logins
        }
        #expect(
            held, "the logins were never seen queued: \(Self.gauges(observer)), answered \(statuses.withLock { $0 })")
        running.terminate()
        let status = running.waitForExit()
        #expect(sent.wait(timeout: .now() + 60) == .success)
        #expect(status == 0, "exit status \(status); stderr: \(running.errorText)")
        // Each login was answered: logged in, or 429 (one client's attempts being checked at once
        // count against its limits) — never 503, and never unanswered (each was sent, on its own
        // open connection, before the shutdown began).
        let answered = statuses.withLock { $0 }
        #expect(answered.count == logins && answered.allSatisfy { [200, 429].contains($0) }, "\(answered)")
        #expect(answered.contains(200), "\(answered)")
        #expect(running.outputText.contains("\"inFlightFinished\":true"))
    }

    /// The demo's gauges from `/metrics` (name → value), empty when the scrape fails.
    static func gauges(_ client: TestClient) -> [String: Int] {
        guard let text = try? client.get("/metrics").text else { return [:] }
        var gauges: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { gauges[String(parts[0])] = value }
        }
        return gauges
    }

}
