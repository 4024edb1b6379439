import AppShell
import AppShellAuth
import AppShellJSON
import AppShellTesting
import Foundation
import NotesApp

/// Notes under test: the app with the memory store, its own public directory and the user
/// `demo` / `notes`, served in either mode of `AppShellTesting`.
final class NotesHarness {
    /// The demo user's password hash (Argon2id), made once.
    static let demoHash = try! PasswordHash.make(password: "notes")
    /// `Examples/Notes/Public`.
    static let publicDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Public").path

    let app: NotesServer
    let server: TestServer
    let client: any HTTPTestClient

    /// The app in `mode`, its splash showing for `splashMilliseconds`.
    init(_ mode: TestMode, splashMilliseconds: Int = 0) throws {
        var configuration = NotesConfiguration()
        configuration.shell.store = .memory
        configuration.shell.publicDirectory = NotesHarness.publicDirectory
        configuration.splashMilliseconds = splashMilliseconds
        configuration.users = ["demo": NotesHarness.demoHash]
        app = try NotesServer(configuration: configuration)
        server = try TestServer(mode, responder: try app.server.makeResponder())
        client = server.client()
    }

    deinit {
        server.stop()
        app.environment.passwordChecks.stop()
    }

    /// `GET /api/state`.
    func state() throws -> JSON { try client.get("/api/state").json }

    /// `POST /api/actions` with `json`: the status and the answer.
    @discardableResult
    func act(_ json: String) throws -> (status: Int, json: JSON) {
        let response = try client.postJSON("/api/actions", json)
        return (response.status, response.json)
    }

    /// Logs in as `demo` through the JSON API.
    @discardableResult
    func logIn() throws -> JSON {
        _ = try state()
        return try act(#"{"action": "login", "username": "demo", "password": "notes"}"#).json
    }

    /// The form token on the page at `path` (the session's, after any rotation).
    func token(on path: String) throws -> String {
        let page = try client.get(path).text
        guard let range = page.range(of: #"name="csrf" value=""#) else { return "" }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Posts the form `fields` (with the token of the page at `page`) to `POST /actions`.
    func submit(_ fields: [(String, String)], from page: String) throws -> TestResponse {
        let token = try token(on: page)
        let body = ([("csrf", token)] + fields).map { "\($0.0)=\(NotesHarness.formEncode($0.1))" }
            .joined(separator: "&")
        return try client.postForm("/actions", body)
    }

    /// `text` percent-encoded for a form body.
    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
