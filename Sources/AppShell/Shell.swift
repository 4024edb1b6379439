import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Glibc

/// The app shell over HTTP: it finds each request's `ShellSession` (live, restored from its
/// snapshot, or new), lets time-based work run, serves the JSON API, the pages, the HTML forms and
/// the event stream, and tells every open page of a session what changed.
public final class Shell: Sendable {
    /// The app.
    public let application: any ShellApplication
    /// Every session.
    public let registry: SessionRegistry
    /// How the session id travels.
    public let cookie: SessionCookie
    /// The time in milliseconds since 1970 (tests move it).
    public let clock: @Sendable () -> Int64
    /// Runs work with no request (the splash finishing, reminders).
    public let scheduler: ShellScheduler
    /// The open event streams of every live app.
    public let events = ShellEvents()
    /// The forms' tokens.
    let tokens: CSRFTokens
    /// The state every new session shows at its first request (see `freshState`).
    private let freshStateCache = Locked<PreparedResponse?>(nil)
    /// The versions of the page's assets.
    let assets: AssetVersions

    /// The current time in milliseconds since 1970.
    public static let systemClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// A shell serving `application` with the sessions of `registry`; `csrfKey` signs the forms'
    /// tokens and `assets` versions the page's files.
    public init(
        application: any ShellApplication, registry: SessionRegistry, cookie: SessionCookie,
        csrfKey: [UInt8] = CSRFTokens.randomKey(), assets: AssetVersions = AssetVersions(directory: "", names: []),
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) {
        self.application = application
        self.registry = registry
        self.cookie = cookie
        self.clock = clock
        self.tokens = CSRFTokens(key: csrfKey)
        self.assets = assets
        scheduler = ShellScheduler(clock: clock)
    }

    /// Adds the JSON API (`/api/state`, `/api/actions`, `/api/events`), the form endpoint
    /// (`POST /actions`) and the pages (`GET /` and `pagePaths`) to `router`.
    public func install(into router: inout Router, pagePaths: [String]) {
        let state = handler { _, shell, session in .prepared(shell.stateResponse(session)) }
        router.get(
            "/api/state",
            SessionResponder(registry: registry, cookie: cookie) { [self] request, session in
                // A new session's first read — a cookieless client, a flood of them — builds no
                // controllers: every new session shows the same state, and its app is made when the
                // session comes back, as of when it began. The session's memo keeps that time, so
                // the registry holds such a session as a bare map entry.
                if session.isNew, session.attachment == nil, let fresh = freshState() {
                    session.memo = clock()
                    return .prepared(fresh)
                }
                return try state(request, session)
            })
        router.post(
            "/api/actions", respond { [self] request, shell, session in try performJSON(request, shell, session) })
        router.post("/actions", respond { [self] request, shell, session in try performForm(request, shell, session) })
        router.get("/api/events", respond { [self] request, shell, session in openEvents(request, shell, session) })
        for path in ["/"] + pagePaths {
            router.get(path, respond { [self] request, shell, session in try page(request, shell, session) })
        }
    }

    /// Starts the scheduler's thread.
    public func startScheduler() { scheduler.start() }

    /// Stops the scheduler's thread.
    public func stopScheduler() { scheduler.stop() }

    /// A responder that runs `body` with the request's shell session, stores its snapshot, and
    /// tells the session's open pages when it changed.
    public func respond(
        _ body: @escaping @Sendable (Request, ShellSession, SessionContext) throws -> Response
    ) -> SessionResponder {
        SessionResponder(registry: registry, cookie: cookie, handler: handler(body))
    }

    /// What `respond` runs under the session's lock, for handlers that decide first whether they
    /// need the app at all.
    func handler(
        _ body: @escaping @Sendable (Request, ShellSession, SessionContext) throws -> Response
    ) -> @Sendable (Request, SessionContext) throws -> Response {
        { [self] request, session in
            let shell = live(session)
            return try withBound(shell, session) { () throws -> Response in
                // Work that became due is news for the pages already open; then the request.
                let before = shell.root.version
                advance(shell, session)
                if shell.root.version != before { publishState(shell, session) }
                let version = shell.root.version
                let response: Response
                do {
                    response = try body(request, shell, session)
                } catch let error as HTTPError {
                    // Refusals (a bad body, a wrong token, a foreign origin) come before any change:
                    // answering them here keeps the live app, which a thrown error would discard.
                    response = .error(error, for: request)
                }
                keep(shell, in: session)
                if shell.root.version != version { publishState(shell, session) }
                return response
            }
        }
    }

    /// Lends `shell`'s controllers the session, its defaults and the shell's services for `body`.
    func withBound<Result>(
        _ shell: ShellSession, _ session: SessionContext, _ body: () throws -> Result
    ) rethrows -> Result {
        shell.root.session = session
        if shell.root.services == nil { shell.root.services = ShellServices(shell: self, channel: shell.channel) }
        defer { shell.root.session = nil }
        return try body()
    }

    /// The session's live app: the one kept in memory, else the one its snapshot describes,
    /// else a new one at the splash. Work that is due (the splash finishing) runs first.
    func live(_ session: SessionContext) -> ShellSession {
        // A kept app is the common case: the clock is read only for the others.
        if let kept = session.attachment as? ShellSession { return kept }
        let now = clock()
        let shell: ShellSession
        if let startedAt = session.memo {
            // Its first state was shown at `startedAt` without making the app: the app starts then.
            shell = application.makeSession(defaults: session.defaults, now: startedAt)
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
        session.memo = nil
        return shell
    }

    /// Runs the work that is due (the splash finishing), and puts a browser that came back while
    /// the splash runs on the scheduler, so that it finishes on time, unasked.
    func advance(_ shell: ShellSession, _ session: SessionContext) {
        shell.coordinator.advance(now: clock())
        if !session.isNew, let deadline = shell.coordinator.nextDeadline, shell.scheduled != deadline {
            shell.scheduled = deadline
            let id = session.id
            scheduler.schedule(at: deadline) { [self] in runScheduledWork(for: id) }
        }
    }

    /// Due work of a session, run by the scheduler under the session's lock as a request would be.
    private func runScheduledWork(for id: SessionID) {
        do {
            _ = try registry.withLiveSession(id) { session in
                // Only an app live in memory: any other catches up when it is next read.
                guard let shell = session.attachment as? ShellSession else { return }
                withBound(shell, session) {
                    let version = shell.root.version
                    shell.scheduled = nil
                    shell.coordinator.advance(now: clock())
                    keep(shell, in: session)
                    if shell.root.version != version { publishState(shell, session) }
                }
            }
        } catch {
            AccessLog.error("scheduled work failed: \(error)")
        }
    }

    /// The state of a new session at its first request, made once from a throwaway session; `nil`
    /// when a new session's start leaves values behind (then every session goes the long way).
    func freshState() -> PreparedResponse? {
        if let cached = freshStateCache.withLock({ $0 }) { return cached }
        let defaults = DefaultsStore()
        let now = clock()
        let shell = application.makeSession(defaults: defaults, now: now)
        shell.coordinator.advance(now: now)
        guard defaults.storedValues.isEmpty else { return nil }
        let response = PreparedResponse(.json(bytes: shell.state(defaults: defaults).serialized))
        freshStateCache.withLock { $0 = response }
        return response
    }

    /// Gives the session the snapshot to store when the controllers changed. A session that holds
    /// no values is not stored, so its snapshot is not worth making.
    func keep(_ shell: ShellSession, in session: SessionContext) {
        guard shell.stored?.version != shell.root.version else { return }
        guard session.isStored || !session.storedValues.isEmpty else { return }
        let bytes = shell.snapshot.json.serialized
        shell.stored = (shell.root.version, bytes)
        session.snapshot = bytes
    }
}
