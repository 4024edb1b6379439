/// Anything that turns a request into a response: routers, static files and handlers alike.
///
/// Responders run synchronously on one of the server's event loops (`threads`). They must not
/// wait for events or slow work: hand the work elsewhere and return `Response.deferred` (the connection
/// waits, not the thread). A thrown `HTTPError` becomes its status and message, any other error a 500.
public protocol HTTPResponder: Sendable {
    /// Answers `request`.
    func respond(to request: Request) throws -> Response

    /// Whether answering `request` reads its body. Asked when a request announces a body, as soon
    /// as its header fields have arrived (`request.body` is still empty): when false, the server
    /// discards the body as it arrives instead of collecting it, never answers 413 for it, and
    /// calls `respond(to:)` with the request without it. The default is true.
    func acceptsBody(_ request: Request) -> Bool

    /// The longest body answering `request` reads, when it reads one (`acceptsBody`); a longer one
    /// gets 413. `nil`, the default: the server's `maxBodyBytes`, which also bounds a larger value.
    func maxBodyBytes(for request: Request) -> Int?
}

extension HTTPResponder {
    /// True: a responder that does not say reads every body (up to the configured limit).
    public func acceptsBody(_ request: Request) -> Bool { true }

    /// `nil`: the server's `maxBodyBytes`.
    public func maxBodyBytes(for request: Request) -> Int? { nil }
}

/// A responder made from a closure.
package struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (Request) throws -> Response

    /// A responder that calls `body`.
    package init(_ body: @escaping @Sendable (Request) throws -> Response) { self.body = body }

    /// Calls the closure.
    package func respond(to request: Request) throws -> Response { try body(request) }
}
