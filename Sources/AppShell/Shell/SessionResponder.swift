import AppShellHTTP
import AppShellSessions

/// A responder whose handler needs the client's session: it finds (or creates) the session from
/// the cookie, runs the handler under the session's lock, stores what changed, and sends
/// `Set-Cookie` only when the session is new or its id changed.
///
/// It never waits on a server thread. When the session's registry has a store writer and the
/// request changed something, the answer is deferred until the change is durable (a response
/// means committed; 503 when the commit failed). When an earlier request's change of the same
/// session is still being committed, the handler runs once it is (on the writer's thread), so
/// it never sees state that is not durable.
///
/// Routes that do not use a `SessionResponder` (static files, `/healthz`, `/metrics`) never
/// create a session and never send a cookie.
public struct SessionResponder: HTTPResponder {
    private let registry: SessionRegistry
    private let cookie: SessionCookie
    private let handler: @Sendable (Request, SessionContext) throws -> Response

    /// A responder that calls `handler` with the request's session.
    package init(
        registry: SessionRegistry, cookie: SessionCookie,
        handler: @escaping @Sendable (Request, SessionContext) throws -> Response
    ) {
        self.registry = registry
        self.cookie = cookie
        self.handler = handler
    }

    /// Runs the handler with the session; a store failure is a 503 and nothing is changed.
    public func respond(to request: Request) throws -> Response {
        // The id is read from the cookie's bytes: no string is made of it (only of a seal).
        var parsed = Presented(id: nil, seal: nil)
        let count = request.withFirstCookie(named: cookie.name) { parsed = Presented(cookie: $0) }
        if count > 1 { throw SessionResponder.ambiguousCookie(named: cookie.name) }
        let presented = parsed
        switch try attempt(request, presented) {
        case .answered(let response):
            return response
        case .committing(let response, let commit):
            return answer(response, after: commit, request, presented, claimed: nil)
        case .busy(let busy):
            // Waits for the session's commit in progress or its load, then for its own commit: brief.
            let pending = PendingResponse(brief: true)
            busy.whenFree { loaded in retry(request, presented, after: loaded, pending, claimed: false) }
            return .deferred(pending)
        }
    }

    private enum Attempt {
        case answered(Response)
        case committing(Response, PendingCommit)
        case busy(BusySession)
    }

    /// Runs the handler once, if the session is free; the response carries its cookie.
    private func attempt(
        _ request: Request, _ presented: Presented, after loaded: LoadedSession? = nil
    ) throws -> Attempt {
        var response = Response()
        var entry: SessionRegistry.Entry?
        var loaded = loaded
        var conflicts = 0
        while entry == nil {
            do {
                entry = try registry.enter(presented: presented.id, seal: presented.seal, after: loaded) { session in
                    response = try handler(request, session)
                }
            } catch let error as StoreError {
                // Committed at once (no store writer) and refused: another session of the user
                // wrote its store first. The request runs again on what is stored.
                guard error.isConflict, conflicts < SessionRegistry.conflictRetries else {
                    throw SessionResponder.unavailable(error, requestID: request.requestID)
                }
                conflicts += 1
                loaded = nil
                response = Response()
            }
        }
        guard let entry else { throw HTTPError(.internalServerError, "internal server error") }
        let context: SessionContext
        switch entry {
        case .committed(let committed): context = committed
        case .committing(let committing, _): context = committing
        case .busy(let busy): return .busy(busy)
        }
        if context.needsCookie {
            let value =
                context.cookieSeal == nil ? cookie.header(for: context.id) : cookie.header(value: context.cookieValue)
            response.headers.add(name: "Set-Cookie", value: value)
        }
        if case .committing(_, let commit) = entry { return .committing(response, commit) }
        return .answered(response)
    }

    /// The answer to a request whose changes wait for the store writer: `response` once they are
    /// durable, 503 when they failed. `claimed` is the request's deferred answer when it has one.
    /// When the write met a conflict (a store shared by several instances, the session changed
    /// meanwhile through another) the request runs again on what is stored, up to
    /// `SessionRegistry.conflictRetries` times (`conflicts`: how many it met already).
    private func answer(
        _ response: Response, after commit: PendingCommit, _ request: Request, _ presented: Presented,
        claimed: PendingResponse?, conflicts: Int = 0
    ) -> Response {
        if case .deferred(let inner) = response.body {
            // The handler answers later itself (work handed off after the commit): only a failed
            // commit is answered here (a new session's cookie then names nothing: harmless).
            commit.whenDone { error in
                if let error {
                    inner.fulfil(
                        .error(SessionResponder.unavailable(error, requestID: request.requestID), for: request))
                }
            }
            if let claimed { inner.forward(to: claimed, adding: response.headers) }
            return response
        }
        let pending = claimed ?? PendingResponse(brief: true)
        // The work for this answer has begun: the server waits for it at shutdown.
        if claimed == nil { _ = pending.claim() }
        // What a failure's answer needs of the request, not the request: its copy (headers, body,
        // path) was retained here and released by the store writer for every action.
        // The id's text only when it is logged.
        let requestID = request.heldRequestID
        let html = request.prefersHTML
        let answer: @Sendable (StoreError?) -> Void = { error in
            pending.fulfil(
                error.map { .error(SessionResponder.unavailable($0, requestID: requestID.text), html: html) }
                    ?? response)
        }
        guard commit.mayConflict else {
            commit.whenDone(answer)
            return .deferred(pending)
        }
        // A shared store's write, or one of a user's store, may meet a conflict: then the request
        // runs again, so it is kept.
        commit.whenDone { [self] error in
            if let error, error.isConflict, conflicts < SessionRegistry.conflictRetries {
                // Its answer showed state another instance had changed: run it again on that.
                retry(request, presented, after: nil, pending, claimed: true, conflicts: conflicts + 1)
            } else {
                answer(error)
            }
        }
        return .deferred(pending)
    }

    /// Runs the request again once its session is free (on the writer's or the loader's thread),
    /// answering it through `pending` — unless the server answered it meanwhile (shutdown: then
    /// nothing runs).
    private func retry(
        _ request: Request, _ presented: Presented, after loaded: LoadedSession?, _ pending: PendingResponse,
        claimed: Bool, conflicts: Int = 0
    ) {
        guard claimed || pending.claim() else { return }
        do {
            switch try attempt(request, presented, after: loaded) {
            case .answered(let response):
                if case .deferred(let inner) = response.body {
                    inner.forward(to: pending, adding: response.headers)
                } else {
                    pending.fulfil(response)
                }
            case .committing(let response, let commit):
                _ = answer(response, after: commit, request, presented, claimed: pending, conflicts: conflicts)
            case .busy(let busy):
                busy.whenFree { loaded in
                    retry(request, presented, after: loaded, pending, claimed: true, conflicts: conflicts)
                }
            }
        } catch let error as HTTPError {
            pending.fulfil(.error(error, for: request))

        } catch {
            Logger.appshell.error("\(request.method) \(request.path) failed: \(error)")
            pending.fulfil(.error(HTTPError(.internalServerError, "internal server error"), for: request))
        }
    }

    /// The error a request with several session cookies answers: which one is the client's cannot
    /// be told (a sibling subdomain, or another port while cookies are not `Secure`, can set one of
    /// the same name: cookie tossing, a login CSRF). Taking none would let the tossed cookie win
    /// once the browser drops the server's own, and the server can only expire its own, not one
    /// set for a parent domain or another path: so 400, and `Clear-Site-Data` asks the browser to
    /// drop this site's cookies (browsers that do not support it leave that to the user).
    static func ambiguousCookie(named name: String) -> HTTPError {
        HTTPError(
            .badRequest,
            "the request carries more than one \(name) cookie, so its session cannot be told: clear this site's cookies and reload",
            headers: ["Clear-Site-Data": "\"cookies\""])
    }

    /// The error a store failure answers: 503, with `Retry-After` when the store is only busy. A
    /// failure (not a busy store) is logged with the request's id.
    static func unavailable(_ error: StoreError, requestID: String) -> HTTPError {
        if error.isConflict {
            return HTTPError(
                .serviceUnavailable,
                "the session was changed at the same moment through another server; nothing was changed, try again",
                headers: ["Retry-After": "1"])
        }
        if let seconds = error.retryAfterSeconds {
            return HTTPError(
                .serviceUnavailable, "the server is busy writing other changes; nothing was changed, try again",
                headers: ["Retry-After": String(seconds)])
        }
        Logger.appshell.error("session store: \(error)", metadata: ["requestID": .string(requestID)])
        return HTTPError(.serviceUnavailable, "the session store is unavailable; nothing was changed")
    }
}

/// What a request's cookie presents: a session id, and the seal after it when the session holds
/// nothing in a shared store (`SessionContext.cookieValue`).
private struct Presented: Sendable {
    let id: SessionID?
    let seal: Substring?

    init(id: SessionID?, seal: Substring?) {
        self.id = id
        self.seal = seal
    }

    /// Parses the cookie's value as received: 43 characters of id, or those, `.` and a seal.
    init(cookie value: UnsafeBufferPointer<UInt8>) {
        let length = SessionID.textLength
        guard value.count > length + 1, value[length] == UInt8(ascii: ".") else {
            self.init(id: SessionID(utf8: value), seal: nil)
            return
        }
        let id = SessionID(utf8: UnsafeBufferPointer(rebasing: value[..<length]))
        let seal = id.map { _ in
            Substring(String(decoding: UnsafeBufferPointer(rebasing: value[(length + 1)...]), as: UTF8.self))
        }
        self.init(id: id, seal: seal)
    }
}
