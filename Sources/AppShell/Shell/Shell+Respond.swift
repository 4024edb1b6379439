import AppShellHTTP
import AppShellSessions

/// How a shell route's handler runs: under the session's lock, on the session's live app bound to
/// the session, after the work that became due; then what changed is kept for the commit, and
/// what others see (the new state, a rotated id's streams ended, the streams opened) follows it.
extension Shell {
    /// A handler of a shell route: given the request's context, it answers.
    public typealias Handler = @Sendable (ShellRequestContext) throws -> Response

    /// A responder that runs `body` with the request's context (its session and live app), stores
    /// the app's snapshot, and tells the session's open pages when it changed.
    public func respond(_ body: @escaping Handler) -> SessionResponder {
        SessionResponder(registry: registry, cookie: cookie, handler: handler(body))
    }

    /// What `respond` runs under the session's lock, for handlers that decide first whether they
    /// need the app at all.
    ///
    /// What others may see waits for the commit: the new state is published, and the streams of a
    /// rotated id are ended, only once the store took the request's changes (under the session's
    /// lock, so events go out in the order of the commits). When the commit fails, the app is
    /// dropped (the registry rebuilds it from the last snapshot) and its streams end, so the pages
    /// reconnect to what was committed.
    ///
    /// A new session whose request left its app as it was made (a cookieless visitor reading a
    /// page, or refused) keeps no app: it stays a bare map entry, and its app is made when it
    /// comes back, as of when it began (see `live`).
    func handler(_ body: @escaping Handler) -> @Sendable (Request, SessionContext) throws -> Response {
        { [self] request, session in
            try onLiveApp(request, session) { app in
                try body(ShellRequestContext(request: request, session: session, app: app))
            }
        }
    }

    /// What the state read (`GET /api/state`, the hot path) runs under the session's lock: as
    /// `handler`, but its body is given the live app alone, as it needs nothing else — making a
    /// `ShellRequestContext` copies the request (+655 instructions per logged-in read, +1.5 %:
    /// the retains and releases of its fields; callgrind, the Performance article).
    func stateHandler() -> @Sendable (Request, SessionContext) throws -> Response {
        { [self] request, session in
            try onLiveApp(request, session) { app in .prepared(app.stateResponse(session)) }
        }
    }

    /// Runs `body` on the session's live app (see `handler`), bound to the session, after the work
    /// that became due; keeps what changed for the commit and registers what follows it.
    private func onLiveApp(
        _ request: Request, _ session: SessionContext, _ body: (LiveApp) throws -> Response
    ) throws -> Response {
        if session.isRetired { return try respondRetired(request, session, body) }
        if session.attachment == nil, session.memo != nil {
            // A visitor's session is about to be held in memory: one client may start only so many.
            // The shell's clock counts milliseconds; the limiter, seconds.
            let wait = sessionStarts.admit(request.clientAddress, now: clock() / 1000)
            guard wait == 0 else {
                throw HTTPError(
                    .tooManyRequests,
                    "too many new sessions from your address; try again in \(wait) seconds",
                    headers: ["Retry-After": String(wait)])
            }
        }
        let made = session.isNew && session.attachment == nil ? clock() : nil
        let app = live(session, now: made)
        return try withBound(app, session) { () throws -> Response in
            let committed = app.root.version
            // Work that became due (the splash finishing), then the request.
            advance(app, session)
            let advanced = app.root.version
            let response: Response
            do {
                response = try body(app)
            } catch let error as HTTPError {
                // Refusals (a bad body, a wrong token, a foreign origin) come before any change:
                // answering them here keeps the live app, which a thrown error would discard.
                response = .error(error, for: request)
            }
            if let made, app.root.version == advanced, session.storedValues.isEmpty, app.pendingStreams.isEmpty,
                !app.root.storesWithoutValues
            {
                // Nothing worth keeping happened to a new session's app: let it go. (In a store
                // shared by several instances the memo goes in the cookie's seal, so the next
                // request, wherever it goes, makes the app as of this moment: nothing is stored.)
                session.attachment = nil
                session.memo = made
                return response
            }
            try keep(app, in: session)
            let opened = app.pendingStreams
            app.pendingStreams = []
            afterCommit(app, session, publishing: app.root.version != committed, subscribing: opened)
            return response
        }
    }

    /// A request that presented an id a rotation retired moments ago (it waited for the lock
    /// while a login or logout ran, or was sent before the browser had the new cookie): it has no
    /// session, so `body` runs on the app a new visitor would get, and the registry keeps nothing
    /// of it and sends no cookie. Its context's `access` is `.retired`: actions refuse it
    /// (`ActionRequestContext`, `performForm`), its event stream ends at once.
    private func respondRetired(
        _ request: Request, _ session: SessionContext, _ body: (LiveApp) throws -> Response
    ) throws -> Response {
        let app = application.makeApp(defaults: session.defaults, environment: environment, now: clock())
        return try withBound(app, session) { () throws -> Response in
            let response: Response
            do {
                response = try body(app)
            } catch let error as HTTPError {
                response = .error(error, for: request)
            }
            // Nothing will ever publish to this app: a stream it opened ends now.
            for opened in app.pendingStreams {
                opened.stream.close()
                opened.admission?.answer.fulfil(.events(opened.stream))
            }
            return response
        }
    }

    /// Registers what follows a commit of `app`'s session — ending the streams and the awaiting
    /// actions of a rotated id,
    /// publishing the new state, then subscribing the streams this request opened (they carry the
    /// state already) — and what follows a failed one.
    func afterCommit(
        _ app: LiveApp, _ session: SessionContext, publishing: Bool, subscribing opened: [OpenedStream] = []
    ) {
        let rotated = session.id != session.originalID
        // The user's store changed: the user's other open pages show it too.
        if let user = session.user, session.userDefaultsIfMade?.hasChanges == true {
            let channel = app.channel
            session.afterCommit { [self] in userStoreChanged(user, by: channel) }
        }
        guard rotated || publishing || !opened.isEmpty || app.streamCount.isPositive else { return }
        session.afterCommit { [self] in
            if rotated {
                events.endStreams(of: app.channel, notOpenedWith: session.id)
                // Actions awaiting work under the old id are cancelled now (409), not when done.
                asyncActions.cancel(of: app.channel, notStartedWith: session.id)
                // Work already scheduled names the old id: schedule it again under the new one.
                scheduleDueWork(app, id: session.id, afterRotation: true)
            }
            if publishing { withBound(app, session) { publishState(app, session) } }
            for stream in opened { subscribe(stream, app, session) }
        }
        // A conflict's request runs again, and publishes then: its pages' streams go on.
        session.afterRollback { [self] in
            if !session.isConflictRollback { events.endStreams(of: app.channel) }
        }
    }

    /// Lends `app`'s controllers the session, its defaults and the shell's services for `body`.
    func withBound<Result>(
        _ app: LiveApp, _ session: SessionContext, _ body: () throws -> Result
    ) rethrows -> Result {
        let outer = app.root.session
        app.root.session = session
        if app.root.services == nil { app.root.services = ShellServices(shell: self, channel: app.channel) }
        defer {
            app.root.session = outer
            // A rendered view is kept for one request: no session holds one between requests.
            if outer == nil { app.root.renderedView = nil }
        }
        return try body()
    }
}
