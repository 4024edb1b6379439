import AppShellHTTP

/// A client that hands each request straight to a server's responder path, in process, without a
/// socket or libmicrohttpd (`HTTPServer.respondInProcess`): routing, allowed hosts, trusted
/// proxies, the body limit, cookies and deferred answers (a password check, a group commit) go
/// the way they go for a connection, and a deferred answer is waited for.
///
/// What it does not exercise — test those with a live server (`TestServer(.live)`): libmicrohttpd's
/// parsing and framing, the socket-level limits (connections, idle timeouts, memory per
/// connection), keep-alive, and event streams (a stream's answer comes back with its status and
/// header fields only). Malformed bytes cannot be sent: a request is made of its parts.
public final class InProcessClient: HTTPTestClient, @unchecked Sendable {
    // @unchecked: a client is used by one test thread at a time.
    /// The server whose responder answers (it need not be started).
    package let server: HTTPServer
    /// The peer address the requests come from.
    public let remoteAddress: String
    /// Cookies the server set, sent back on later requests (name → value).
    public var cookies: [String: String] = [:]
    /// How long a deferred answer is waited for before `send` throws.
    public var timeoutMilliseconds = 60_000

    /// `http://127.0.0.1`, the `Host` its requests carry.
    public var origin: String { "http://127.0.0.1" }

    /// A client of `server`'s responder whose requests come from `remoteAddress`.
    package init(server: HTTPServer, remoteAddress: String = "127.0.0.1") {
        self.server = server
        self.remoteAddress = remoteAddress
    }

    /// Sends a request and returns the answer. `Host` (`127.0.0.1`, unless `headers` has one),
    /// `Content-Length` and the jar's cookies are added, as the socket client adds them.
    public func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> TestResponse {
        var fields = HTTPHeaders()
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { fields.add(name: "Host", value: "127.0.0.1") }
        for (name, value) in headers { fields.add(name: name, value: value) }
        if let cookie = CookieJar.header(cookies) { fields.add(name: "Cookie", value: cookie) }
        if !body.isEmpty || method == "POST" || method == "PUT" {
            fields.add(name: "Content-Length", value: String(body.count))
        }
        guard
            let response = server.respondInProcess(
                method: HTTPMethod(rawValue: method), target: target, headers: fields, body: body,
                remoteAddress: remoteAddress, timeoutMilliseconds: timeoutMilliseconds)
        else {
            throw TestClientError(description: "no answer to \(method) \(target) within \(timeoutMilliseconds) ms")
        }
        guard case .bytes(let bytes) = response.body else {
            throw TestClientError(description: "the in-process answer's body is not in memory")
        }
        let answer = TestResponse(status: Int(response.status.rawValue), headers: response.headers, body: bytes)
        CookieJar.remember(answer, in: &cookies)
        return answer
    }
}
