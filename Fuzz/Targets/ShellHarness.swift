import AppShellDemo
import AppShellHTTP
import AppShellSessions
import FoundationEssentials

@testable import AppShell

/// The demo's whole responder in this process (no server, no sockets), with the memory store and
/// one session whose cookie every request carries: requests go in as the server would hand them.
final class ShellHarness: @unchecked Sendable {
    static let shared = ShellHarness()

    let app: DemoServer
    let router: Router
    private(set) var cookie: String

    private init() {
        var configuration = DemoConfiguration()
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.reminderDelayMilliseconds = 0
        // The password is checked by a closure that costs nothing (Argon2id would be the whole run).
        configuration.accounts.users = ["demo": "hash"]
        configuration.publicDirectory = ShellHarness.publicDirectory()
        app = try! DemoServer(configuration: configuration, verifyPassword: { password, _ in password == "demo" })
        router = try! app.makeResponder()
        cookie = ""
        let first = try! router.respond(to: Request(method: .get, target: "/api/state"))
        take(first)
    }

    /// The repository's `Public` directory (the fuzz binaries run from the repository's root).
    private static func publicDirectory() -> String {
        var directory = FileManager.default.currentDirectoryPath
        while !directory.isEmpty, directory != "/" {
            if FileManager.default.fileExists(atPath: directory + "/Public/openapi.json") {
                return directory + "/Public"
            }
            directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
        }
        return "Public"
    }

    /// Answers `request` (the session's cookie and a `Host` added) and keeps a new cookie; a
    /// thrown error other than `HTTPError`, or a 5xx other than 501 (a method no one defines) and
    /// 503, stops the run.
    func respond(method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) -> Int {
        var headers = headers
        headers.add(name: "Host", value: "127.0.0.1")
        headers.add(name: "Cookie", value: app.cookie.name + "=" + cookie)
        let request: Request
        do {
            request = try Request(method: method, target: target, headers: headers, body: body)
        } catch {
            return error.status.rawValue
        }
        let status: Int
        do {
            let response = try router.respond(to: request)
            take(response)
            if case .stream(let stream) = response.body { stream.close() }
            status = response.status.rawValue
        } catch let error as HTTPError {
            status = error.status.rawValue
        } catch {
            FuzzCheck.require(false, "a responder threw \(error), not an HTTPError")
            return 500
        }
        FuzzCheck.require(status < 500 || status == 501 || status == 503, "status \(status) for \(method) \(target)")
        return status
    }

    /// The session id a `Set-Cookie` of `response` gives, if any.
    private func take(_ response: Response) {
        for value in response.headers.values(for: "Set-Cookie") {
            guard let equals = value.firstIndex(of: "="), let end = value.firstIndex(of: ";") else { continue }
            cookie = String(value[value.index(after: equals)..<end])
        }
    }

    /// The form token of the session the harness's cookie names.
    var csrfToken: String {
        guard let id = SessionID(cookie) else { return "" }
        return app.shell.tokens.token(for: id.bytes)
    }
}
