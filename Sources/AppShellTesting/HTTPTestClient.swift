import AppShellHTTP

/// A client that sends requests to an app under test and keeps its cookies: over a socket to a
/// live server (`TestClient`) or straight into the server's responder in process
/// (`InProcessClient`). A test written against this protocol runs in either mode (see `TestServer`).
public protocol HTTPTestClient: AnyObject, Sendable {
    /// Cookies the server set, sent back on later requests (name → value).
    var cookies: [String: String] { get set }
    /// The origin a browser on this server's pages sends with a form (`Origin`), e.g.
    /// `http://127.0.0.1:8080`: the scheme and the `Host` the client sends.
    var origin: String { get }

    /// Sends `method` `target` with `headers` and `body` (`Host`, `Content-Length` and the jar's
    /// cookies added as a browser adds them) and returns the answer.
    func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws -> TestResponse
}

extension HTTPTestClient {
    /// `GET target`.
    public func get(_ target: String, headers: [(String, String)] = []) throws -> TestResponse {
        try send("GET", target, headers: headers, body: [])
    }

    /// `POST target` with a JSON body.
    public func postJSON(_ target: String, _ json: String, headers: [(String, String)] = []) throws -> TestResponse {
        try send("POST", target, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    /// `POST target` with a form body.
    public func postForm(_ target: String, _ form: String, headers: [(String, String)] = []) throws -> TestResponse {
        try send(
            "POST", target, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(form.utf8))
    }
}

/// The cookie handling both clients share.
enum CookieJar {
    /// The `Cookie` field for `cookies`, or `nil` when there are none.
    static func header(_ cookies: [String: String]) -> String? {
        guard !cookies.isEmpty else { return nil }
        return cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }

    /// Keeps the cookies `response` sets in `cookies` and forgets those it expires.
    static func remember(_ response: TestResponse, in cookies: inout [String: String]) {
        for header in response.headers.values(for: "Set-Cookie") {
            let pair = header.split(separator: ";", maxSplits: 1).first ?? ""
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals]).trimmingCharacters(in: " ")
            let value = String(pair[pair.index(after: equals)...])
            let expired = header.lowercased().contains("max-age=0") || value.isEmpty
            if expired { cookies[name] = nil } else { cookies[name] = value }
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
