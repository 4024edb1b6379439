import AppShellHTTP
import AppShellSessions

/// The shell's routes: which path is which endpoint, and which context each handler is given.
extension Shell {
    /// Adds the JSON API (`/api/state`, `/api/actions`, `/api/events`), the form endpoint
    /// (`POST /actions`), the pages (`GET /` and `pagePaths`) and, for an installable app, its
    /// manifest, service worker and offline page to `router`.
    ///
    /// Each route's handler is given a `ShellRequestContext` (`respond`); the routes that change
    /// the session take the narrower context their checks make (`ActionRequestContext`,
    /// `FormSubmission`), so that no handler checks the client by hand.
    package func install(into router: inout Router, pagePaths: [String]) {
        let state = stateHandler()
        router.get(
            "/api/state",
            SessionResponder(registry: registry, cookie: cookie) { [self] request, session in
                // A new session's first read — a cookieless client, a flood of them — builds no
                // controllers: every new session shows the same state, and its app is made when the
                // session comes back, as of when it began. The session's memo keeps that time, so
                // the registry holds such a session as a bare map entry — or, in a store shared by
                // several instances, in its cookie (`SessionSeal`): nothing is stored either way.
                if session.isNew, session.attachment == nil, let fresh = freshState() {
                    session.memo = clock()
                    return .prepared(fresh)
                }
                return try state(request, session)
            })
        router.add(
            .post, "/api/actions", maxBodyBytes: maxActionBodyBytes,
            respond { [self] context in try performJSON(ActionRequestContext(checking: context)) })
        router.add(
            .post, "/actions", maxBodyBytes: maxActionBodyBytes,
            SessionResponder(registry: registry, cookie: cookie) { [self] request, session in
                // The form is checked before any app is made: a post with no valid token or from
                // another site costs nothing but the refusal.
                let form: FormSubmission
                do {
                    form = try FormSubmission(checking: request, session: session, tokens: tokens)
                } catch let error as HTTPError {
                    return .error(error, for: request)
                }
                return try handler { [self] context in try performForm(form, context) }(request, session)
            })
        router.get("/api/events", respond { [self] context in try openEvents(context) })
        for path in ["/"] + pagePaths {
            router.get(path, respond { [self] context in try page(context) })
        }
        if let webApp { installWebApp(webApp, into: &router) }
    }
}
