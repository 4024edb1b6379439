import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Glibc

/// The app shell over HTTP: it finds each request's `LiveApp` (live, restored from its
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
    public let events: ShellEvents
    /// The forms' tokens.
    let tokens: CSRFTokens
    /// The state every new session shows at its first request (see `freshState`).
    private let freshStateCache = Locked<PreparedResponse?>(nil)
    /// The versions of the page's assets.
    let assets: AssetVersions
    /// The app's installable shell (manifest, service worker, offline page), if it has one.
    let webApp: InstallableWebApp?
    /// What every page shows around its screen: the app's name, stylesheets and scripts.
    let chrome: PageChrome
    /// The app's action names (`ShellApplication.knownActions`), read once.
    let knownActions: Set<String>

    /// The current time in milliseconds since 1970.
    public static let systemClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// A shell serving `application` with the sessions of `registry`; `chrome` is what every page
    /// shows around the screen (the app's name, stylesheets and scripts), `csrfKey` signs the forms'
    /// tokens, `assets` versions the page's files, and a session may have `maxStreamsPerSession`
    /// event streams open; `webApp` makes the site installable and able to open offline; the
    /// scheduler runs on `timers` (the server's shared queue), or on a queue of its own if `nil`.
    public init(
        application: any ShellApplication, registry: SessionRegistry, cookie: SessionCookie, chrome: PageChrome,
        csrfKey: [UInt8] = CSRFTokens.randomKey(), assets: AssetVersions = AssetVersions(directory: "", names: []),
        webApp: InstallableWebApp? = nil,
        maxStreamsPerSession: Int = ShellEvents.defaultMaxStreamsPerSession,
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock, timers: TimerQueue? = nil
    ) {
        events = ShellEvents(maxStreamsPerSession: maxStreamsPerSession)
        self.application = application
        knownActions = application.knownActions
        self.registry = registry
        self.cookie = cookie
        self.clock = clock
        self.tokens = CSRFTokens(key: csrfKey)
        self.assets = assets
        self.webApp = webApp
        self.chrome = chrome
        scheduler = ShellScheduler(clock: clock, timers: timers)
    }

    /// Adds the JSON API (`/api/state`, `/api/actions`, `/api/events`), the form endpoint
    /// (`POST /actions`), the pages (`GET /` and `pagePaths`) and, for an installable app, its
    /// manifest, service worker and offline page to `router`.
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
        router.post(
            "/actions",
            SessionResponder(registry: registry, cookie: cookie) { [self] request, session in
                // The form is checked before any app is made: a post with no valid token or from
                // another site costs nothing but the refusal.
                let form: Form
                do {
                    form = try checkForm(request, session)
                } catch let error as HTTPError {
                    return .error(error, for: request)
                }
                return try handler { [self] request, shell, session in try performForm(form, request, shell, session) }(
                    request, session)
            })
        router.get(
            "/api/events",
            respond { [self] request, shell, session in
                // A retired id's stream would hear nothing: it ends at once, and the browser
                // reconnects with the id it has by then.
                if session.isRetired {
                    let ended = EventStream()
                    ended.close()
                    return .events(ended)
                }
                // A page opened during the splash passes on the URL it was opened at (`next`).
                if let target = request.query("next"), Shell.isSameSitePath(target), !Shell.isSafeOnly(request) {
                    application.rememberTarget(target, in: shell)
                }
                return try openEvents(request, shell, session)
            })
        for path in ["/"] + pagePaths {
            router.get(path, respond { [self] request, shell, session in try page(request, shell, session) })
        }
        if let webApp { installWebApp(webApp, into: &router) }
    }

    /// Starts the scheduler's thread.
    public func startScheduler() { scheduler.start() }

    /// Stops the scheduler's thread.
    public func stopScheduler() { scheduler.stop() }

    /// A responder that runs `body` with the request's shell session, stores its snapshot, and
    /// tells the session's open pages when it changed.
    public func respond(
        _ body: @escaping @Sendable (Request, LiveApp, SessionContext) throws -> Response
    ) -> SessionResponder {
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
    func handler(
        _ body: @escaping @Sendable (Request, LiveApp, SessionContext) throws -> Response
    ) -> @Sendable (Request, SessionContext) throws -> Response {
        { [self] request, session in
            if session.isRetired { return try respondRetired(request, session, body) }
            let made = session.isNew && session.attachment == nil ? clock() : nil
            let shell = live(session, now: made)
            return try withBound(shell, session) { () throws -> Response in
                let committed = shell.root.version
                // Work that became due (the splash finishing), then the request.
                advance(shell, session)
                let advanced = shell.root.version
                let response: Response
                do {
                    response = try body(request, shell, session)
                } catch let error as HTTPError {
                    // Refusals (a bad body, a wrong token, a foreign origin) come before any change:
                    // answering them here keeps the live app, which a thrown error would discard.
                    response = .error(error, for: request)
                }
                if let made, shell.root.version == advanced, session.storedValues.isEmpty, shell.pendingStreams.isEmpty
                {
                    // Nothing worth keeping happened to a new session's app: let it go.
                    session.attachment = nil
                    session.memo = made
                    return response
                }
                keep(shell, in: session)
                let opened = shell.pendingStreams
                shell.pendingStreams = []
                afterCommit(shell, session, publishing: shell.root.version != committed, subscribing: opened)
                return response
            }
        }
    }

    /// A request that presented an id a rotation retired moments ago (it waited for the lock
    /// while a login or logout ran, or was sent before the browser had the new cookie): it has no
    /// session, so `body` runs on the app a new visitor would get, and the registry keeps nothing
    /// of it and sends no cookie. Actions refuse it (see `performJSON`, `performForm`).
    private func respondRetired(
        _ request: Request, _ session: SessionContext,
        _ body: (Request, LiveApp, SessionContext) throws -> Response
    ) throws -> Response {
        let shell = application.makeApp(defaults: session.defaults, now: clock())
        return try withBound(shell, session) { () throws -> Response in
            let response: Response
            do {
                response = try body(request, shell, session)
            } catch let error as HTTPError {
                response = .error(error, for: request)
            }
            // Nothing will ever publish to this app: a stream it opened ends now.
            for stream in shell.pendingStreams { stream.close() }
            return response
        }
    }

    /// Registers what follows a commit of `shell`'s session — ending the streams of a rotated id,
    /// publishing the new state, then subscribing the streams this request opened (they carry the
    /// state already) — and what follows a failed one.
    func afterCommit(
        _ shell: LiveApp, _ session: SessionContext, publishing: Bool, subscribing opened: [EventStream] = []
    ) {
        let rotated = session.id != session.originalID
        guard rotated || publishing || !opened.isEmpty || shell.streamCount.isPositive else { return }
        session.afterCommit { [self] in
            if rotated {
                events.endStreams(of: shell.channel, notOpenedWith: session.id)
                // Work already scheduled names the old id: schedule it again under the new one.
                scheduleDueWork(shell, id: session.id, afterRotation: true)
            }
            if publishing { withBound(shell, session) { publishState(shell, session) } }
            for stream in opened {
                events.subscribe(stream, to: shell.channel, openedWith: session.id, count: shell.streamCount)
            }
        }
        session.afterRollback { [self] in events.endStreams(of: shell.channel) }
    }

    /// Lends `shell`'s controllers the session, its defaults and the shell's services for `body`.
    func withBound<Result>(
        _ shell: LiveApp, _ session: SessionContext, _ body: () throws -> Result
    ) rethrows -> Result {
        let outer = shell.root.session
        shell.root.session = session
        if shell.root.services == nil { shell.root.services = ShellServices(shell: self, channel: shell.channel) }
        defer { shell.root.session = outer }
        return try body()
    }

    /// The session's live app: the one kept in memory, else the one its snapshot describes,
    /// else a new one at the splash, made at `now` (a new session's) or the clock's time.
    func live(_ session: SessionContext, now made: Int64? = nil) -> LiveApp {
        // A kept app is the common case: the clock is read only for the others.
        if let kept = session.attachment as? LiveApp { return kept }
        let now = made ?? clock()
        let shell: LiveApp
        if let startedAt = session.memo {
            // Its first state was shown at `startedAt` without making the app: the app starts then.
            shell = application.makeApp(defaults: session.defaults, now: startedAt)
        } else if let kept = session.keptSnapshot, let json = try? JSON(parsing: kept.bytes),
            let snapshot = ShellSnapshot(json: json),
            let restored = application.restoreApp(from: snapshot, defaults: session.defaults, now: now)
        {
            shell = restored
            shell.stored = (restored.root.version, kept)
            // What it had scheduled and not delivered goes out when due (at once if overdue).
            for notification in restored.root.notifications { schedule(notification, for: session.id) }
            // The pages still open on the session listen where its last app published.
            if let channel = snapshot.channel {
                shell.adopt(channel: channel, streamCount: events.streamCount(of: channel))
            }
        } else {
            shell = application.makeApp(defaults: session.defaults, now: now)
        }
        session.attachment = shell
        session.memo = nil
        return shell
    }

    /// Runs the work that is due (the splash finishing), and puts a browser that came back while
    /// the splash runs on the scheduler, so that it finishes on time, unasked.
    func advance(_ shell: LiveApp, _ session: SessionContext) {
        shell.advance(now: clock())
        if !session.isNew { scheduleDueWork(shell, id: session.id) }
    }

    /// Gives the scheduler the app's next deadline, for the session `id` names (once per deadline
    /// and id: work scheduled for an id that was rotated since finds nothing to do).
    func scheduleDueWork(_ shell: LiveApp, id: SessionID, afterRotation: Bool = false) {
        guard let deadline = shell.nextDeadline, afterRotation || shell.scheduled != deadline else {
            return
        }
        shell.scheduled = deadline
        scheduler.schedule(at: deadline) { [self] in runScheduledWork(for: id) }
    }

    /// Due work of a session, run by the scheduler under the session's lock as a request would be.
    private func runScheduledWork(for id: SessionID) {
        do {
            _ = try registry.withLiveSession(id) { session in
                // Only an app live in memory: any other catches up when it is next read.
                guard let shell = session.attachment as? LiveApp else { return }
                withBound(shell, session) {
                    let version = shell.root.version
                    shell.scheduled = nil
                    shell.advance(now: clock())
                    keep(shell, in: session)
                    afterCommit(shell, session, publishing: shell.root.version != version)
                }
            }
        } catch {
            AccessLog.error("scheduled work failed: \(error)")
        }
    }

    /// Has `notification` delivered when it is due, to the session `id` names.
    func schedule(_ notification: ScheduledNotification, for id: SessionID) {
        scheduler.schedule(at: notification.due) { [self] in deliverNotification(notification, to: id) }
    }

    /// A notification that came due for the session `id` named when it was scheduled: sent to the
    /// open pages of its live app — under the session's lock, after the commit, as a request's
    /// events are — and taken out of the app's snapshot; dropped when `id` names no live session
    /// any more (rotated by a logout or login, expired, removed): it belonged to the session state
    /// that asked for it. When the app is not in memory it stays in the snapshot, and goes out when
    /// the app is rebuilt (`live`); when it was delivered already (scheduled again by a rebuild),
    /// nothing happens.
    func deliverNotification(_ notification: ScheduledNotification, to id: SessionID) {
        do {
            _ = try registry.withLiveSession(id) { session in
                guard let shell = session.attachment as? LiveApp,
                    let index = shell.root.notifications.firstIndex(of: notification)
                else { return }
                shell.root.notifications.remove(at: index)
                shell.root.snapshotIsStale = true
                keep(shell, in: session)
                let data = notification.data
                session.afterCommit { [events] in events.publish(shell.channel, event: "notification", data: data) }
            }
        } catch {
            AccessLog.error("a notification could not be delivered: \(error)")
        }
    }

    /// The state of a new session at its first request, made once from a throwaway session; `nil`
    /// when a new session's start leaves values behind (then every session goes the long way).
    func freshState() -> PreparedResponse? {
        if let cached = freshStateCache.withLock({ $0 }) { return cached }
        let defaults = DefaultsStore()
        let now = clock()
        let shell = application.makeApp(defaults: defaults, now: now)
        shell.advance(now: now)
        guard defaults.storedValues.isEmpty else { return nil }
        let response = PreparedResponse(.json(bytes: shell.stateBytes(defaults: defaults)))
        freshStateCache.withLock { $0 = response }
        return response
    }

    /// Gives the session the snapshot of the controllers when they changed: the registry stores it
    /// when the session is worth storing, and keeps it in memory in any case, so that a request
    /// whose commit fails rebuilds the app as it was last committed.
    ///
    /// The snapshot is kept as a value: its bytes are made only when a backend writes them to a
    /// file (the SQLite store, on its writer's thread) or the app is rebuilt from them — never
    /// for the memory store's actions (README, Performance).
    func keep(_ shell: LiveApp, in session: SessionContext) {
        if session.id != session.originalID, !shell.root.notifications.isEmpty {
            // Scheduled under the id this request retired (a login, a logout): they go with it.
            shell.root.notifications.removeAll()
            shell.root.snapshotIsStale = true
        }
        guard shell.stored?.version != shell.root.version || shell.root.snapshotIsStale else { return }
        shell.root.snapshotIsStale = false
        let kept = shell.snapshot.kept
        shell.stored = (shell.root.version, kept)
        session.keptSnapshot = kept
    }
}
