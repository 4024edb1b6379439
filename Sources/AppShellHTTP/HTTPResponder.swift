/// Anything that turns a request into a response: routers, static files and handlers alike.
///
/// Responders run synchronously on one of libmicrohttpd's worker threads. They must not wait for
/// events; a thrown `HTTPError` becomes its status and message, any other error a 500.
public protocol HTTPResponder: Sendable {
    /// Answers `request`.
    func respond(to request: Request) throws -> Response
}

/// A responder made from a closure.
public struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (Request) throws -> Response

    /// A responder that calls `body`.
    public init(_ body: @escaping @Sendable (Request) throws -> Response) { self.body = body }

    /// Calls the closure.
    public func respond(to request: Request) throws -> Response { try body(request) }
}
