import AppShellJSON
import AppShellTesting
import Foundation
import Testing

@testable import AppShellSessions

/// The file system of the `appshell` process's store fills up (a 1 MiB tmpfs the test mounts and
/// fills): every state-changing request is answered 503 with a JSON error and changes nothing,
/// reads go on being served (even those due to refresh a session's stored access time), and once
/// there is room again writes work — without a restart, a crash or a damaged file.
@Suite(.serialized) struct DiskFullTests {
    static func isServiceUnavailable(_ response: TestResponse) -> Bool {
        response.status == 503 && response.headers["Content-Type"]?.contains("application/json") == true
            && response.json["error"]?.stringValue?.contains("nothing was changed") == true
    }

    /// Empties the store's write-ahead log (`wal_checkpoint(TRUNCATE)`, asked again while the
    /// server's connections are in its way), so that the next write needs new room on the disk: a
    /// log that a checkpoint copied in full is written again from its start, in room the file has
    /// already, and such a write would succeed on a full disk.
    static func emptyLog(of path: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        for _ in 0..<500 {
            if try connection.query("PRAGMA wal_checkpoint(TRUNCATE)", row: { $0.int64(at: 0) }).first == 0 { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        Issue.record("the store's log could not be emptied: the server's connections kept it busy")
    }

    @Test func writesAre503AndChangeNothingReadsGoOnAndWritesComeBack() throws {
        guard let disk = FailedCommitTests.SmallDisk() else {
            print("SKIPPED writesAre503AndChangeNothingReadsGoOnAndWritesComeBack: cannot mount a tmpfs (needs root)")
            return
        }
        defer { disk.remove() }
        let store = disk.path + "/store.sqlite"
        // Idle timeout 8 s: a read refreshes the stored access time once 2 s have passed.
        let running = try ServerProcess(
            product: "appshell",
            environment: [
                "APPSHELL_PORT": "0", "APPSHELL_STORE_PATH": store, "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
                "APPSHELL_SESSION_IDLE_TIMEOUT_SECONDS": "8", "APPSHELL_ACCESS_LOG": "false",
            ], directory: CommandTests.packageRoot)
        let port = try running.port()
        running.collectOutput()
        let user = TestClient(port: port)
        _ = try user.get("/api/state")
        #expect(try ShellAPITests.login(user).status == 200)
        let visitor = TestClient(port: port)
        #expect(try visitor.get("/api/state").json["screen"] == "login")
        let before = try user.get("/api/state").json
        let userCookie = user.cookies
        let visitorCookie = visitor.cookies

        try Self.emptyLog(of: store)
        disk.fill()
        Thread.sleep(forTimeInterval: 2.2)
        // Reads: the state (its access time is due to be stored), a page, a stream, static files,
        // health, and a new visitor (whose session holds nothing, so costs no write).
        let state = try user.get("/api/state")
        #expect(state.status == 200)
        #expect(state.json == before)
        #expect(try user.get("/main").status == 200)
        let (stream, head) = try SessionIsolationTests.openStream(
            port, cookie: SessionIsolationTests.cookieHeader(user))
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        _ = stream
        #expect(try user.get("/app.css").status == 200)
        #expect(try user.get("/healthz").status == 200)
        #expect(try TestClient(port: port).get("/api/state").status == 200)

        // Writes: refused, with a JSON error, changing nothing (same cookie, same state).
        for action in ["showList", "presentSecond", "logout"] {
            let answer = try ShellAPITests.act(user, action)
            #expect(Self.isServiceUnavailable(answer), "\(action): \(answer.status) \(answer.text)")
        }
        let refusedLogin = try ShellAPITests.login(visitor)
        #expect(Self.isServiceUnavailable(refusedLogin), "login: \(refusedLogin.status) \(refusedLogin.text)")
        #expect(user.cookies == userCookie && visitor.cookies == visitorCookie)
        let after = try user.get("/api/state").json
        for key in [
            "screen", "root", "stack", "presented", "coordinators", "defaults", "version", "lifecycle", "transition",
            "view", "actions",
        ] {
            #expect(
                after[key] == before[key],
                "\(key): \(String(describing: after[key])) vs \(String(describing: before[key]))")
        }
        #expect(after == before)
        #expect(try visitor.get("/api/state").json["screen"] == "login")
        #expect(running.process.isRunning)

        // Room again: the same requests succeed.
        disk.free()
        let again = try ShellAPITests.act(user, "showList")
        #expect(again.json["screen"] == "list", "showList: \(again.status) \(again.text)")
        #expect(try ShellAPITests.login(visitor).status == 200)
        #expect(try visitor.get("/api/state").json["screen"] == "main")

        running.terminate()
        #expect(running.waitForExit(seconds: 30) == 0)
        #expect(!running.errorText.contains("fatal"))
        // The file is whole (quick_check) and holds what was acknowledged.
        let backend = try SQLiteDefaultsBackend(path: store)
        #expect(try backend.count() == 2)
    }
}
