import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// Durability: a value is on disk once its response is sent, whatever happens to the process next.
@Suite struct SessionPersistenceTests {
    /// A folder for a test's store, whose file is in a folder not made yet.
    static func storeFolder() throws -> (TemporaryDirectory, path: String) {
        let folder = try TemporaryDirectory("sessions")
        return (folder, folder.path("nested/store.sqlite"))
    }

    static func start(_ path: String) throws -> (ServerProcess, TestClient) {
        let probe = try ServerProcess(product: "SessionProbe", arguments: [path])
        return (probe, TestClient(port: try probe.port()))
    }

    @Test(arguments: ["SIGTERM", "SIGKILL"])
    func valuesSurviveARestartOnTheSameFile(stop: String) throws {
        let (folder, path) = try Self.storeFolder()
        defer { folder.remove() }
        let (first, client) = try Self.start(path)
        let set = try client.postJSON(
            "/defaults", #"{"isLogin": true, "username": "demo", "viewType": 1, "ratio": 0.5}"#)
        #expect(set.status == 200)
        let cookie = try #require(client.cookies["appshell_session"])
        if stop == "SIGKILL" { first.kill() } else { first.terminate() }
        _ = first.waitForExit()

        let (second, restarted) = try Self.start(path)
        restarted.cookies = ["appshell_session": cookie]
        let state = try restarted.get("/defaults")
        #expect(state.headers["Set-Cookie"] == nil)
        #expect(state.json == ["isLogin": true, "username": "demo", "viewType": 1, "ratio": 0.5])
        second.terminate()
        #expect(second.waitForExit() == 0)
    }

    @Test func aRotatedIDIsTheOnlyOneThatWorksAfterARestart() throws {
        let (folder, path) = try Self.storeFolder()
        defer { folder.remove() }
        let (first, client) = try Self.start(path)
        _ = try client.postJSON("/defaults", #"{"isLogin": true}"#)
        let old = try #require(client.cookies["appshell_session"])
        _ = try client.send("POST", "/rotate")
        let new = try #require(client.cookies["appshell_session"])
        #expect(new != old)
        first.kill()
        _ = first.waitForExit()

        let (second, restarted) = try Self.start(path)
        restarted.cookies = ["appshell_session": old]
        #expect(try restarted.get("/defaults").json == [:])
        restarted.cookies = ["appshell_session": new]
        #expect(try restarted.get("/defaults").json == ["isLogin": true])
        second.terminate()
        _ = second.waitForExit()
    }
}
