import AppShellHTTP
import Glibc

/// A small blocking HTTP/1.1 client over a raw socket, for tests: well-formed requests with a
/// cookie jar, and arbitrary bytes for malformed ones. Every read times out after 60 seconds so a
/// hung server fails a test instead of stalling it.
public final class TestClient: HTTPTestClient, @unchecked Sendable {
    // @unchecked: a client is used by one test thread at a time.
    /// The server's port on 127.0.0.1.
    public let port: Int
    /// Cookies the server set, sent back on later requests (name → value).
    public var cookies: [String: String] = [:]
    private var connection: TestConnection?
    /// What must live as long as the client: the server a `TestServer` made it for.
    var keptAlive: AnyObject?
    /// HTTPS: the certificate to trust and the name to check it for; `nil` speaks plain HTTP.
    public var tls: TestTLS?

    /// A client for 127.0.0.1:`port`, over TLS with `tls`.
    public init(port: Int, tls: TestTLS? = nil) {
        self.port = port
        self.tls = tls
    }

    /// `http://127.0.0.1:<port>` (`https` over TLS).
    public var origin: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)" }

    /// The serial number (hex) of the certificate the server presented on the kept-alive
    /// connection (HTTPS only).
    public var peerSerialNumber: String? { connection?.tls?.peerSerialNumber }

    /// The TLS protocol (`TLS1.3`) and ALPN protocol agreed on the kept-alive connection.
    public var negotiated: (protocolName: String, applicationProtocol: String?)? {
        connection?.tls.map { ($0.protocolName, $0.applicationProtocol) }
    }

    /// Sends a request on the kept-alive connection (opening one when needed) and reads the
    /// response. `Host` (unless `headers` has one), `Content-Length` and the jar's cookies are added.
    /// A kept-alive connection that the server closed meanwhile (its keep-alive timeout) and that
    /// answered nothing is replaced and the request sent again on a new one, as browsers and curl
    /// do: the server closes only a connection that waits for a request, so it never read this one.
    public func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> TestResponse {
        var lines = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { lines += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { lines += "\(name): \(value)\r\n" }
        if let cookie = CookieJar.header(cookies) { lines += "Cookie: \(cookie)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { lines += "Content-Length: \(body.count)\r\n" }
        lines += "\r\n"
        let reused = self.connection
        let receivedBefore = reused?.received ?? 0
        do {
            return try send(Array(lines.utf8) + body, method: method, on: reused)
        } catch  where reused != nil && reused?.received == receivedBefore {
            return try send(Array(lines.utf8) + body, method: method, on: nil)
        }
    }

    /// Sends `request` on `connection` (a new one when `nil`) and reads the response.
    private func send(_ request: [UInt8], method: String, on connection: TestConnection?) throws -> TestResponse {
        let connection = try connection ?? TestConnection(port: port, tls: tls)
        self.connection = connection
        do {
            try connection.write(request)
            let response = try connection.readResponse(method: method)
            CookieJar.remember(response, in: &cookies)
            if response.headers["Connection"]?.lowercased() == "close" { close() }
            return response
        } catch {
            close()
            throw error
        }
    }

    /// Writes `bytes` on a new connection and returns everything the server sends until it closes.
    public func raw(_ bytes: [UInt8]) throws -> String {
        let connection = try TestConnection(port: port, tls: tls)
        try connection.write(bytes)
        return String(decoding: try connection.readToEnd(), as: UTF8.self)
    }

    /// Closes the kept-alive connection.
    public func close() { connection = nil }
}
