import AppShellHTTP
import AppShellSessions

/// A responder whose handler needs the client's session: it finds (or creates) the session from
/// the cookie, runs the handler under the session's lock, stores what changed, and sends
/// `Set-Cookie` only when the session is new or its id changed.
///
/// Routes that do not use a `SessionResponder` (static files, `/healthz`, `/metrics`) never
/// create a session and never send a cookie.
public struct SessionResponder: HTTPResponder {
    private let registry: SessionRegistry
    private let cookie: SessionCookie
    private let handler: @Sendable (Request, SessionContext) throws -> Response

    /// A responder that calls `handler` with the request's session.
    public init(
        registry: SessionRegistry, cookie: SessionCookie,
        handler: @escaping @Sendable (Request, SessionContext) throws -> Response
    ) {
        self.registry = registry
        self.cookie = cookie
        self.handler = handler
    }

    /// Runs the handler with the session; a store failure is a 503 and nothing is changed.
    public func respond(to request: Request) throws -> Response {
        var response = Response()
        let context: SessionContext
        do {
            // The id is read from the cookie's bytes: no string is made of it.
            var presented: SessionID?
            request.withCookie(named: cookie.name) { presented = SessionID(utf8: $0) }
            context = try registry.enterSession(presented: presented) { session in
                response = try handler(request, session)
            }
        } catch let error as StoreError {
            AccessLog.error("session store: \(error)", requestID: request.requestID)
            throw HTTPError(.serviceUnavailable, "the session store is unavailable; nothing was changed")
        }
        if context.needsCookie {
            response.headers.add(name: "Set-Cookie", value: cookie.header(for: context.id))
        }
        return response
    }
}
