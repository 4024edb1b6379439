/// An error a handler throws to answer with a given status and a message for the client.
///
/// The server turns it into a JSON body `{"error": message}` (or a small HTML page when the
/// client prefers HTML) with `status`.
public struct HTTPError: Error, Sendable, Equatable {
    /// The status to answer with.
    public let status: HTTPStatus
    /// What was wrong, in words the client can act on.
    public let message: String
    /// Extra headers for the error response (e.g. `Allow` on 405).
    public let headers: [String: String]

    /// An error answering `status` with `message`.
    public init(_ status: HTTPStatus, _ message: String, headers: [String: String] = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    /// 400 with `message`.
    public static func badRequest(_ message: String) -> HTTPError { HTTPError(.badRequest, message) }
    /// 404 with `message`.
    public static func notFound(_ message: String = "not found") -> HTTPError {
        HTTPError(.notFound, message)
    }

    /// 501 for a method the server does not implement.
    public static func notImplemented(_ method: HTTPMethod) -> HTTPError {
        HTTPError(.notImplemented, "the method \(method) is not implemented by this server")
    }
}
