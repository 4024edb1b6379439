import AppShell
import AppShellAuth
import AppShellTesting
import Foundation
import NotesApp

/// Notes under test: the app with the memory store, its own public directory and the user
/// `demo` / `notes`, served in either mode of `AppShellTesting`. It is its client: the kit's
/// `state()`, `act(_:)`, `submit(_:on:_:)`, `follow(_:)` and `logIn(…)` are its methods.
final class NotesHarness: HTTPTestClient {
    /// The demo user's password hash (Argon2id), made once.
    static let demoHash = try! PasswordHash.make(password: "notes")
    /// `Examples/Notes/Public`.
    static let publicDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Public").path

    let app: NotesServer
    let server: TestServer
    let client: any HTTPTestClient

    /// The app in `mode`, its splash showing for `splashMilliseconds`, its configuration changed
    /// by `edit`.
    init(
        _ mode: TestMode, splashMilliseconds: Int = 0, _ edit: (inout NotesConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = NotesConfiguration()
        configuration.shell.store = .memory
        configuration.shell.publicDirectory = NotesHarness.publicDirectory
        configuration.splashMilliseconds = splashMilliseconds
        configuration.shell.accounts.users = ["demo": NotesHarness.demoHash]
        edit(&configuration)
        app = try NotesServer(configuration: configuration)
        // Work with no request (a user's other pages rendered again) runs on the server's timers.
        app.server.startTimers()
        server = try TestServer(mode, responder: try app.server.makeResponder())
        client = server.client()
    }

    deinit {
        server.stop()
        app.server.stop()
    }

    /// Logs in as `demo` through the JSON API.
    @discardableResult
    func logIn() throws -> TestResponse { try logIn(username: "demo", password: "notes") }

    var cookies: [String: String] {
        get { client.cookies }
        set { client.cookies = newValue }
    }
    var origin: String { client.origin }
    func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws -> TestResponse {
        try client.send(method, target, headers: headers, body: body)
    }
}
