import AppShell
import AppShellJSON
import AppShellTesting
import Foundation
import NotesApp
import Testing

/// The time a test's server reads, moved on by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Int64 = 1_000_000
    var read: @Sendable () -> Int64 { { [self] in lock.withLock { now } } }
    func advance(milliseconds: Int64) { lock.withLock { now += milliseconds } }
}

/// A `launch` during the splash is the framework's waiting deep link: kept in the session's
/// snapshot, so a restart before the splash is done does not lose it.
@Suite struct LaunchRestartTests {
    /// Notes over the SQLite file `store`, its splash a second long on `clock`, in process.
    static func start(_ store: String, clock: ManualClock) throws -> (NotesServer, TestServer) {
        var configuration = NotesConfiguration()
        configuration.shell.store = .sqlite
        configuration.shell.storePath = store
        configuration.shell.publicDirectory = NotesHarness.publicDirectory
        configuration.splashMilliseconds = 1000
        configuration.shell.accounts.users = ["demo": NotesHarness.demoHash]
        let app = try NotesServer(configuration: configuration, clock: clock.read)
        return (app, try TestServer(.inProcess, responder: try app.server.makeResponder()))
    }

    /// What `run()` does once the server has stopped: the store's writes committed, the store closed.
    static func stop(_ app: NotesServer) { app.server.stop() }

    /// `statedFirst`: the page asked for the state before the launch; else the launch is the new
    /// session's first request (whose app is otherwise not kept when nothing changed).
    @Test(arguments: [true, false]) func aLaunchDuringTheSplashSurvivesARestart(statedFirst: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("notes.sqlite").path
        let clock = ManualClock()

        var (app, server) = try Self.start(store, clock: clock)
        var client = server.client()
        if statedFirst { #expect(try client.state()["screen"] == "splash") }
        let launched = try client.act(#"{"action": "launch", "source": "note", "id": "1"}"#)
        #expect(launched.status == 200)
        #expect(launched.json["screen"] == "splash")
        let cookies = client.cookies
        Self.stop(app)

        // Started again, the splash is still showing; once it is done, login leads to the note.
        (app, server) = try Self.start(store, clock: clock)
        defer { Self.stop(app) }
        client = server.client()
        client.cookies = cookies
        #expect(try client.state()["screen"] == "splash")
        clock.advance(milliseconds: 1000)
        #expect(try client.state()["screen"] == "login")
        let note = try client.logIn(username: "demo", password: "notes").json
        #expect(note["screen"] == "note")
        #expect(note["stack"] == ["notes", "note"])
        #expect(note["view"]?["id"] == 1)
    }
}
