import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Glibc

/// The app shell over HTTP: it finds each request's `ShellSession` (live, restored from its
/// snapshot, or new), lets time-based work run, and serves the JSON API and the HTML page.
public struct Shell: Sendable {
    /// The app.
    public let application: any ShellApplication
    /// Every session.
    public let registry: SessionRegistry
    /// How the session id travels.
    public let cookie: SessionCookie
    /// The time in milliseconds since 1970 (tests move it).
    public let clock: @Sendable () -> Int64
    /// Runs time-based work with no request (the splash finishing).
    public let scheduler: ShellScheduler

    /// The current time in milliseconds since 1970.
    public static let systemClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// A shell serving `application` with the sessions of `registry`.
    public init(
        application: any ShellApplication, registry: SessionRegistry, cookie: SessionCookie,
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) {
        self.application = application
        self.registry = registry
        self.cookie = cookie
        self.clock = clock
        scheduler = ShellScheduler(clock: clock)
    }

    /// Starts the scheduler's thread: due work then runs under the session's lock, as a request
    /// would, and its changes are stored.
    public func startScheduler() {
        scheduler.start { [self] id in
            do {
                _ = try registry.withLiveSession(id) { session in
                    // Only a session whose app is live in memory: anything else catches up when read.
                    guard let shell = session.attachment as? ShellSession else { return }
                    shell.root.defaults = session.defaults
                    shell.root.session = session
                    defer { shell.root.session = nil }
                    shell.scheduled = nil
                    shell.coordinator.advance(now: clock())
                    keep(shell, in: session)
                }
            } catch {
                AccessLog.error("scheduled work failed: \(error)")
            }
        }
    }

    /// Stops the scheduler's thread.
    public func stopScheduler() { scheduler.stop() }

    /// Adds `GET /api/state`, `POST /api/actions` and `GET /` to `router`.
    public func install(into router: inout Router) {
        router.get("/api/state", respond { _, shell, session in .json(shell.state(defaults: session.defaults)) })
        router.post("/api/actions", respond { request, shell, session in try perform(request, shell, session) })
        router.get("/", respond { request, shell, session in try page(request, shell, session) })
    }

    /// A responder that runs `body` with the request's shell session and stores its snapshot.
    public func respond(
        _ body: @escaping @Sendable (Request, ShellSession, SessionContext) throws -> Response
    ) -> SessionResponder {
        SessionResponder(registry: registry, cookie: cookie) { request, session in
            let shell = live(session)
            shell.root.session = session
            defer { shell.root.session = nil }
            let response = try body(request, shell, session)
            keep(shell, in: session)
            return response
        }
    }

    /// The session's live app: the one kept in memory, else the one its snapshot describes,
    /// else a new one at the splash. Work that is due (the splash finishing) runs first.
    func live(_ session: SessionContext) -> ShellSession {
        let now = clock()
        let shell: ShellSession
        if let kept = session.attachment as? ShellSession {
            shell = kept
            shell.root.defaults = session.defaults
        } else if let bytes = session.snapshot, let json = try? JSON(parsing: bytes),
            let snapshot = ShellSnapshot(json: json),
            let restored = application.restoreSession(from: snapshot, defaults: session.defaults, now: now)
        {
            shell = restored
            shell.stored = (restored.root.version, bytes)
        } else {
            shell = application.makeSession(defaults: session.defaults, now: now)
        }
        session.attachment = shell
        shell.coordinator.advance(now: now)
        // A browser that came back is waiting for the splash: finish it on time, unasked.
        if !session.isNew, let deadline = shell.coordinator.nextDeadline, shell.scheduled != deadline {
            shell.scheduled = deadline
            scheduler.schedule(session.id, at: deadline)
        }
        return shell
    }

    /// Gives the session the snapshot to store when the controllers changed.
    func keep(_ shell: ShellSession, in session: SessionContext) {
        guard shell.stored?.version != shell.root.version else { return }
        let bytes = shell.snapshot.json.serialized
        shell.stored = (shell.root.version, bytes)
        session.snapshot = bytes
    }

    /// `POST /api/actions`: `{"action": name, …parameters}`.
    private func perform(_ request: Request, _ shell: ShellSession, _ session: SessionContext) throws -> Response {
        let body = try request.decodeJSON()
        guard var members = body.objectValue, let name = members.removeValue(forKey: "action")?.stringValue else {
            throw HTTPError.badRequest("the body must be a JSON object with an \"action\" string")
        }
        guard application.knownActions.contains(name) else {
            let known = application.knownActions.sorted().joined(separator: ", ")
            throw HTTPError.badRequest("unknown action \"\(name)\"; known actions: \(known)")
        }
        let action = ScreenAction(name: name, parameters: members, clientAddress: request.remoteAddress)
        do {
            try apply(action, shell, session)
        } catch {
            var state = shell.state(defaults: session.defaults).objectValue ?? [:]
            state["error"] = .string(error.message)
            return .json(.object(state), status: HTTPStatus(rawValue: error.status))
        }
        return .json(shell.state(defaults: session.defaults))
    }

    /// Runs `action`; a change of the defaults that no transition accompanied still counts as a
    /// change of the version.
    func apply(_ action: ScreenAction, _ shell: ShellSession, _ session: SessionContext) throws(ActionError) {
        let version = shell.root.version
        let changedBefore = session.defaults.hasChanges
        try dispatch(action, shell)
        if shell.root.version == version && session.defaults.hasChanges && !changedBefore { shell.root.noteChange() }
    }

    /// Gives `action` to the visible screen's coordinator, or `launch` to the app coordinator.
    func dispatch(_ action: ScreenAction, _ shell: ShellSession) throws(ActionError) {
        if action.name == "launch" { return try shell.coordinator.launch(action) }
        let visible = shell.root.visibleScreen
        guard visible.actions.contains(action.name) else {
            throw ActionError(status: 409, "the \(visible.name) screen does not offer \"\(action.name)\"")
        }
        guard let handler = visible.actionHandler else {
            throw ActionError(status: 409, "nothing handles \"\(action.name)\" on the \(visible.name) screen")
        }
        try handler.screen(visible, didRequest: action)
    }

    /// `GET /`: the visible screen's HTML; `?launch=notification` launches as from a notification.
    private func page(_ request: Request, _ shell: ShellSession, _ session: SessionContext) throws -> Response {
        if let source = request.query("launch") {
            do {
                try apply(ScreenAction(name: "launch", parameters: ["source": .string(source)]), shell, session)
            } catch {
                throw HTTPError(HTTPStatus(rawValue: error.status), error.message)
            }
        }
        let visible = shell.root.visibleScreen
        return .html(
            """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>AppShell — \(HTML.escape(visible.name))</title></head>
            <body><main id="screen" data-screen="\(HTML.escape(visible.name))" data-version="\(shell.root.version)">
            \(visible.renderHTML())
            </main></body>
            </html>
            """)
    }
}
