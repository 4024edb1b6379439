import AppShellHTTP
import AppShellJSON

/// A response as the test client read it off the wire.
public struct TestResponse: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields.
    public let headers: HTTPHeaders
    /// The body bytes.
    public let body: [UInt8]

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON (`.null` when it is not JSON).
    public var json: JSON { (try? JSON(parsing: body)) ?? .null }
}

/// A failure of the test client: connection refused, timeout, or a malformed response.
public struct TestClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}
