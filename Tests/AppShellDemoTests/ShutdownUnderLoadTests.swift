import AppShellConcurrency
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// SIGTERM to the `appshell` process while clients act, read, log in and hold event streams
/// (reopening them as EventSource does): no request the server took fails, every answer it gave
/// reaches its client, it exits 0 within the grace period, and the SQLite store is closed
/// cleanly — checkpointed, its `-wal` and `-shm` gone, `quick_check` ok, every acknowledged write
/// there after a restart.
@Suite struct ShutdownUnderLoadTests {
    static let graceSeconds = 10

    /// What the clients received, as `METHOD path status`, and what went wrong for them.
    final class Tally: Sendable {
        let received = Locked<[String: Int]>([:])
        let problems = Locked<[String]>([])

        func record(_ method: String, _ path: String, _ status: Int) {
            received.withLock { $0["\(method) \(path) \(status)", default: 0] += 1 }
        }

        func problem(_ text: String) { problems.withLock { $0.append(text) } }
    }

    static func environment(_ store: String) -> [String: String] {
        [
            "APPSHELL_PORT": "0", "APPSHELL_STORE_PATH": store, "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_SHUTDOWN_TIMEOUT_SECONDS": "\(graceSeconds)", "APPSHELL_PASSWORD_CHECK_THREADS": "1",
            "APPSHELL_ACCESS_LOG": "true",
        ]
    }

    /// A logged-in client (the login is counted in `tally`).
    static func loggedIn(_ port: Int, _ tally: Tally) throws -> TestClient {
        let client = TestClient(port: port)
        tally.record("GET", "/api/state", try client.get("/api/state").status)
        let login = try ShellAPITests.login(client)
        tally.record("POST", "/api/actions", login.status)
        try #require(login.status == 200)
        return client
    }

    /// Runs `body` on a new thread until it returns false or `stop` is set.
    static func loop(_ group: DispatchGroup, _ stop: Locked<Bool>, _ body: @escaping @Sendable () -> Bool) {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            while !stop.withLock({ $0 }) && body() {}
        }
    }

    @Test func sigtermUnderLoadWithOpenStreamsLosesNothingAndClosesTheStore() throws {
        let folder = NSTemporaryDirectory() + "appshell-sigterm-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = folder + "/store.sqlite"
        let running = try ServerProcess(
            product: "appshell", environment: Self.environment(store), directory: CommandTests.packageRoot)
        let port = try running.port()
        running.collectOutput()
        let tally = Tally()
        let stop = Locked(false)
        let group = DispatchGroup()

        // Clients acting on their own sessions, one action after the other: each remembers the
        // version of the last state it was answered.
        let actors = try (0..<4).map { _ in try Self.loggedIn(port, tally) }
        let versions = Locked<[Int: Int]>([:])
        for (index, client) in actors.enumerated() {
            let step = Locked(0)
            Self.loop(group, stop) {
                let action = step.withLock {
                    $0 += 1; return $0 % 2 == 1 ? "showList" : "pop"
                }
                guard let answer = try? ShellAPITests.act(client, action) else { return false }
                tally.record("POST", "/api/actions", answer.status)
                if answer.status == 200 { versions.withLock { $0[index] = answer.json["version"]?.integerValue } }
                return true
            }
        }
        // Readers: a logged-in page and state, static files, health.
        let reader = try Self.loggedIn(port, tally)
        Self.loop(group, stop) {
            for path in ["/api/state", "/main", "/app.css", "/healthz"] {
                guard let answer = try? reader.get(path) else { return false }
                tally.record("GET", path, answer.status)
            }
            return true
        }
        // New visitors logging in: with one password-check thread, some wait in its queue.
        for _ in 0..<3 {
            Self.loop(group, stop) {
                let client = TestClient(port: port)
                guard let state = try? client.get("/api/state") else { return false }
                tally.record("GET", "/api/state", state.status)
                guard let login = try? ShellAPITests.login(client) else { return false }
                tally.record("POST", "/api/actions", login.status)
                return true
            }
        }
        // Pages holding event streams, reopened as soon as they end (on the same connection while
        // it stays open); each stream must end cleanly (the last chunk), never cut off.
        let opened = Locked(0)
        for page in 0..<6 {
            let cookie = SessionIsolationTests.cookieHeader(page % 2 == 0 ? actors[0] : reader)
            Self.loop(group, stop) {
                guard let connection = try? RawConnection(port: port) else { return false }
                while !stop.withLock({ $0 }) {
                    guard
                        (try? connection.send(
                            "GET /api/events HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n\r\n")) != nil,
                        let head = try? connection.read(through: "\r\n\r\n")
                    else { return false }
                    let status = Int(head.dropFirst(9).prefix(3)) ?? 0
                    tally.record("GET", "/api/events", status)
                    if status == 200 { opened.withLock { $0 += 1 } }
                    if head.lowercased().contains("content-length:") {
                        // A refusal with a body (503 once shutdown began): read it, then go on or stop.
                        _ = try? connection.read(through: "}")
                        if head.lowercased().contains("connection: close") { return false }
                        continue
                    }
                    guard (try? connection.read(through: "0\r\n\r\n")) != nil else {
                        tally.problem("an event stream was cut off without its last chunk")
                        return false
                    }
                }
                return false
            }
        }
        #expect(eventually { opened.withLock { $0 } >= 6 })
        usleep(500_000)

        running.terminate()
        let status = running.waitForExit(seconds: Double(Self.graceSeconds) + 5)
        stop.withLock { $0 = true }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(status == 0, "exit status \(String(describing: status)); stderr: \(running.errorText)")
        let output = running.outputText
        #expect(output.contains("\"inFlightFinished\":true"), "a request outlived the grace period")
        #expect(tally.problems.withLock { $0 }.isEmpty, "\(tally.problems.withLock { $0 })")

        // Every answer the server gave (its access log) reached the client, and no request the
        // server took failed: actions and logins 200, reads 200; a stream asked for again after
        // the shutdown began is refused with 503 (it is not in flight: none is held open then).
        var logged: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            guard let entry = try? JSON(parsing: String(line)), let path = entry["path"]?.stringValue,
                let method = entry["method"]?.stringValue, let code = entry["status"]?.integerValue
            else { continue }
            logged["\(method) \(path) \(code)", default: 0] += 1
        }
        let received = tally.received.withLock { $0 }
        #expect(logged == received, "answers the server gave but the clients did not get (or the reverse)")
        let failed = received.filter { key, _ in
            !key.hasSuffix(" 200") && key != "GET /api/events 503" && key != "GET /app.css 304"
        }
        #expect(failed.isEmpty, "requests that failed: \(failed)")
        #expect(received["POST /api/actions 200", default: 0] > 20, "too little load to mean anything: \(received)")

        // The store was closed: checkpointed into the file, no write-ahead log or shared memory left.
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"), "the -wal file was left: not closed")
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"), "the -shm file was left: not closed")
        do { _ = try SQLiteDefaultsBackend(path: store) }  // quick_check, schema

        // Every acknowledged action is there after a restart, and nothing unacknowledged.
        let restarted = try ServerProcess(
            product: "appshell", environment: Self.environment(store), directory: CommandTests.packageRoot)
        let newPort = try restarted.port()
        defer {
            restarted.terminate()
            _ = restarted.waitForExit(seconds: 30)
        }
        for (index, client) in actors.enumerated() {
            let again = TestClient(port: newPort)
            again.cookies = client.cookies
            let state = try again.get("/api/state").json
            #expect(state["version"]?.integerValue == versions.withLock { $0[index] }, "session \(index)")
        }
    }
}
