import AppShell
import AppShellDemo
import AppShellSessions
import AppShellTesting
import Testing

/// With the memory store an action keeps its app's snapshot as a value, never serialized; the
/// bytes are made only when the app is rebuilt from it — and it comes back exactly as it was.
@Suite struct KeptSnapshotTests {
    /// The kept snapshot of the session `client`'s cookie names.
    static func kept(_ app: DemoServer, _ client: TestClient) throws -> SessionSnapshot? {
        let id = try #require(SessionID(client.cookies[app.cookie.name] ?? ""))
        return try app.sessions.withLiveSession(id) { $0.keptSnapshot } ?? nil
    }

    @Test func anActionKeepsItsSnapshotUnserializedAndAnEvictedSessionComesBackFromIt() throws {
        let (app, live) = try ShellAPITests.start(maxSessionsInMemory: 1)
        let first = live.client()
        _ = try first.get("/api/state")
        #expect(try ShellAPITests.login(first).status == 200)
        #expect(try ShellAPITests.act(first, "showList").status == 200)
        let before = try first.get("/api/state").json
        #expect(before["screen"] == "list")
        let kept = try #require(try Self.kept(app, first))
        #expect(!kept.isSerialized, "the memory store serialized an action's snapshot")

        // Another session takes the only place in memory; the first comes back from its record.
        let second = live.client()
        _ = try second.get("/api/state")
        #expect(try ShellAPITests.login(second).status == 200)
        let firstID = try #require(SessionID(first.cookies[app.cookie.name] ?? ""))
        #expect(!app.sessions.holdsInMemory(firstID))
        let after = try first.get("/api/state").json
        for key in ["screen", "root", "stack", "presented", "coordinators", "version", "lifecycle"] {
            #expect(after[key] == before[key], "\(key) changed when the app was rebuilt from its snapshot")
        }
        #expect(kept.isSerialized)
        #expect(try ShellAPITests.act(first, "pop").status == 200)
        #expect(try first.get("/api/state").json["screen"] == "main")
    }
}
