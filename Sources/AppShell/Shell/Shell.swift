import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Glibc

/// The app shell over HTTP: it finds each request's `LiveApp` (live, restored from its
/// snapshot, or new), lets time-based work run, serves the JSON API, the pages, the HTML forms and
/// the event stream, and tells every open page of a session what changed.
///
/// Each job is a part of its own: the routes (`Shell+Routes`), running a handler on a session's
/// live app with its `ShellRequestContext` (`Shell+Respond`), the client's checks
/// (`RequestChecks`), the JSON API (`Shell+Actions`), the form endpoint (`Shell+Forms`), running an
/// action (`Shell+Dispatch`), deferred actions, pages (`Shell+Pages`) in their layout
/// (`PageLayout`), the caches (`Shell+Caches`), event streams (`Shell+Events`) and the installable
/// app's routes (`Shell+WebApp`). This file holds what they share, and the app's life between
/// requests: finding the live app, due work, notifications and the snapshot.
public final class Shell: Sendable {
    /// The app.
    package let application: any ShellApplication
    /// Every session.
    package let registry: SessionRegistry
    /// How the session id travels.
    package let cookie: SessionCookie
    /// The time in milliseconds since 1970 (tests move it).
    package let clock: @Sendable () -> Int64
    /// What every session's screens and coordinators reach (`RootController.environment`): the
    /// app's values (`ShellApplication.environmentValues`, read once) with the shell's `clock`.
    package let environment: EnvironmentValues
    /// Runs work with no request (the splash finishing, reminders).
    package let scheduler: ShellScheduler
    /// The open event streams of every live app.
    package let events: ShellEvents
    /// The forms' tokens.
    let tokens: CSRFTokens
    /// The longest body an action (`POST /api/actions`, `POST /actions`) may have.
    let maxActionBodyBytes: Int
    /// How fast one client may start sessions held in memory.
    let sessionStarts: SessionStartLimiter
    /// What the live apps' kept answers may hold in all.
    let cachedAnswers: CachedAnswerBudget
    /// The bytes the live apps' kept answers (their state, their page) hold now.
    package var keptAnswerBytes: Int { cachedAnswers.heldBytes }
    /// The state every new session shows at its first request (see `freshState`).
    private let freshStateCache = Locked<PreparedResponse?>(nil)
    /// The versions of the page's assets.
    let assets: AssetVersions
    /// The app's installable shell (manifest, service worker, offline page), if it has one.
    let webApp: InstallableWebApp?
    /// What every page shows around its screen: the app's name, stylesheets and scripts.
    let chrome: PageChrome
    /// The document around every page's `main` (the chrome's head and app bar).
    let pageLayout: PageLayout
    /// The app's action names (`ShellApplication.knownActions`), read once.
    let knownActions: Set<String>
    /// What the app's coordinators declare: which coordinator types may own each screen type.
    let restoration: RestorationRegistry
    /// The actions awaiting work now (`RootController.awaiting`), at most `maxAsyncActions`.
    let asyncActions: AsyncActions
    /// How many actions may await work at once.
    package var maxAsyncActions: Int { asyncActions.limit }
    /// Actions awaiting work now (their tasks not ended).
    package var runningAsyncActions: Int { asyncActions.count }

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
    /// scheduler runs on `timers` (the server's shared queue), or on a queue of its own if `nil`;
    /// `relay` carries the session events to and from the other instances sharing the store, and
    /// `ledger` counts the streams a session has open at all of them; an action's body is at most
    /// `maxActionBodyBytes`, and one client starts at most `newSessionsPerMinute` sessions held in
    /// memory a minute (0: no limit); the answers the live apps keep prepared hold at most
    /// `maxCachedAnswerBytes` in all; at most `maxAsyncActions` actions await work at once; the
    /// framework's login flow uses `accounts`.
    package init(
        application: any ShellApplication, registry: SessionRegistry, cookie: SessionCookie, chrome: PageChrome,
        csrfKey: [UInt8] = CSRFTokens.randomKey(), assets: AssetVersions = AssetVersions(directory: "", names: []),
        webApp: InstallableWebApp? = nil,
        maxStreamsPerSession: Int = ShellEvents.defaultMaxStreamsPerSession,
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock, timers: TimerQueue? = nil,
        relay: (any StoreMessageRelay)? = nil, ledger: (any StreamLedger)? = nil,
        maxActionBodyBytes: Int = ShellConfiguration.defaultMaxActionBodyBytes,
        newSessionsPerMinute: Int = ShellConfiguration.defaultNewSessionsPerMinute,
        maxCachedAnswerBytes: Int = ShellConfiguration.defaultMaxCachedAnswerBytes,
        maxAsyncActions: Int = ShellConfiguration.defaultMaxAsyncActions, accounts: Accounts? = nil
    ) {
        asyncActions = AsyncActions(limit: maxAsyncActions)
        cachedAnswers = CachedAnswerBudget(limit: maxCachedAnswerBytes)
        self.maxActionBodyBytes = maxActionBodyBytes
        sessionStarts = SessionStartLimiter(perMinute: newSessionsPerMinute)
        events = ShellEvents(maxStreamsPerSession: maxStreamsPerSession, relay: relay, ledger: ledger)
        self.application = application
        knownActions = application.knownActions
        restoration = Self.restorationRegistry(of: application)
        self.registry = registry
        self.cookie = cookie
        self.clock = clock
        var environment = application.environmentValues
        environment.clock = clock
        if let accounts { environment.accounts = accounts }
        self.environment = environment
        self.tokens = CSRFTokens(key: csrfKey)
        self.assets = assets
        self.webApp = webApp
        self.chrome = chrome
        scheduler = ShellScheduler(clock: clock, timers: timers)
        pageLayout = PageLayout(chrome: chrome, assets: assets, webApp: webApp)
    }

    /// Starts the scheduler's thread.
    package func startScheduler() { scheduler.start() }

    /// Stops the scheduler's thread.
    package func stopScheduler() { scheduler.stop() }

    /// Starts taking the events of the other instances sharing the store (no-op when it is not
    /// shared) and counting streams with them, and the notifications they schedule: each is delivered here
    /// `takeoverDelayMilliseconds` after it is due if its instance did not deliver it (it stopped).
    ///
    /// An announcement names its session by store key, not id (the id would cross Redis): the
    /// session is the one of a page of the channel listening here then. With none, there is no
    /// page here to show it; the notification stays in the session's snapshot, and the instance
    /// that next rebuilds the app from it delivers it (at once, being overdue).
    ///
    /// Another instance waiting for a session's lease this one holds (`LeaseTerms`) asks for it
    /// through the relay too: it is given up at once (`SessionRegistry.releaseLease`).
    package func startRelaying() {
        events.startRelaying(leaseChannel: registry.backend.leaseChannel) { [weak self] notification, channel, key in
            guard let self else { return }
            scheduler.schedule(at: notification.due + Self.takeoverDelayMilliseconds) { [self] in
                guard let id = events.sessionID(of: channel, storeKey: key) else { return }
                deliverNotification(notification, to: id)
            }
        } changed: { [weak self] channel, id, version in
            self?.relayedState(of: channel, session: id, version: version)
        } userChanged: { [weak self] user in
            self?.renderUserPages(of: user)
        } released: { [weak self] message in
            self?.registry.releaseLease(requestedBy: message)
        }
    }

    /// Stops taking the other instances' events, and gives back this instance's streams' places.
    package func stopRelaying() { events.stopRelaying(leaseChannel: registry.backend.leaseChannel) }

    /// How long after a notification is due the other instances sharing the store deliver it,
    /// when the instance that scheduled it has not: enough for that one to have done so (it
    /// then finds it gone), and for their clocks to differ a little.
    package static let takeoverDelayMilliseconds: Int64 = 2_000

    /// The session's live app: the one kept in memory, else the one its snapshot describes,
    /// else a new one at the splash, made at `now` (a new session's) or the clock's time.
    func live(_ session: SessionContext, now made: Int64? = nil) -> LiveApp {
        // A kept app is the common case: the clock is read only for the others.
        if let kept = session.attachment as? LiveApp { return kept }
        let now = made ?? clock()
        let app: LiveApp
        if let startedAt = session.memo {
            // Its first state was shown at `startedAt` without making the app: the app starts then.
            app = application.makeApp(defaults: session.defaults, environment: environment, now: startedAt)
        } else if let kept = session.keptSnapshot, let json = try? JSON(parsing: kept.bytes),
            let snapshot = ShellSnapshot(json: json),
            let restored = application.restoreApp(
                from: snapshot, defaults: session.defaults, environment: environment, now: now)
        {
            app = restored
            app.stored = (restored.root.version, kept)
            // What it had scheduled and not delivered goes out when due (at once if overdue).
            for notification in restored.root.notifications { schedule(notification, for: session.id) }
            // The pages still open on the session listen where its last app published.
            if let channel = snapshot.channel {
                app.adopt(channel: channel, streamCount: events.streamCount(of: channel))
            }
        } else {
            app = application.makeApp(defaults: session.defaults, environment: environment, now: now)
        }
        app.join(cachedAnswers)
        session.attachment = app
        session.memo = nil
        return app
    }

    /// Runs the work that is due (the splash finishing), and puts a browser that came back while
    /// the splash runs on the scheduler, so that it finishes on time, unasked.
    func advance(_ app: LiveApp, _ session: SessionContext) {
        app.advance(now: clock())
        if !session.isNew { scheduleDueWork(app, id: session.id) }
    }

    /// Gives the scheduler the app's next deadline, for the session `id` names (once per deadline
    /// and id: work scheduled for an id that was rotated since finds nothing to do).
    func scheduleDueWork(_ app: LiveApp, id: SessionID, afterRotation: Bool = false) {
        guard let deadline = app.nextDeadline, afterRotation || app.scheduled != deadline else {
            return
        }
        app.scheduled = deadline
        scheduler.schedule(at: deadline) { [self] in runScheduledWork(for: id) }
    }

    /// Due work of a session, run by the scheduler under the session's lock as a request would be.
    private func runScheduledWork(for id: SessionID) {
        do {
            _ = try registry.withLiveSession(id) { session in
                // Only an app live in memory: any other catches up when it is next read.
                guard let app = session.attachment as? LiveApp else { return }
                try withBound(app, session) {
                    let version = app.root.version
                    app.scheduled = nil
                    app.advance(now: clock())
                    try keep(app, in: session)
                    afterCommit(app, session, publishing: app.root.version != version)
                }
            }
        } catch {
            Logger.appshell.error("scheduled work failed: \(error)")
        }
    }

    /// Has `notification` delivered when it is due, to the session `id` names.
    func schedule(_ notification: ScheduledNotification, for id: SessionID) {
        scheduler.schedule(at: notification.due) { [self] in deliverNotification(notification, to: id) }
    }

    /// Has a notification a screen just scheduled delivered when it is due, here — and by the
    /// other instances sharing the store, should this one stop before (`startRelaying`).
    func scheduleNew(_ notification: ScheduledNotification, for id: SessionID, channel: String) {
        schedule(notification, for: id)
        events.announce(notification, for: id, on: channel)
    }

    /// A notification that came due for the session `id` named when it was scheduled: sent to the
    /// open pages of its live app — under the session's lock, after the commit, as a request's
    /// events are — and taken out of the app's snapshot; dropped when `id` names no live session
    /// any more (rotated by a logout or login, expired, removed): it belonged to the session state
    /// that asked for it. An app not in memory (the session left memory, or another instance
    /// changed it) is rebuilt from the session's snapshot, which keeps the notifications not yet
    /// delivered; when it was delivered already (by another instance, or scheduled again by a
    /// rebuild), nothing happens.
    func deliverNotification(_ notification: ScheduledNotification, to id: SessionID) {
        do {
            _ = try registry.withLiveSession(id) { session in
                guard session.attachment is LiveApp || session.keptSnapshot != nil else { return }
                let app = live(session)
                guard let index = app.root.notifications.firstIndex(of: notification) else { return }
                app.root.notifications.remove(at: index)
                app.root.snapshotIsStale = true
                try keep(app, in: session)
                let data = notification.data
                session.afterCommit { [events] in events.publish(app.channel, event: "notification", data: data) }
            }
        } catch {
            Logger.appshell.error("a notification could not be delivered: \(error)")
        }
    }

    /// The state of a new session at its first request, made once from a throwaway session; `nil`
    /// when a new session's start leaves values behind (then every session goes the long way).
    func freshState() -> PreparedResponse? {
        if let cached = freshStateCache.withLock({ $0 }) { return cached }
        let defaults = DefaultsStore()
        let now = clock()
        let app = application.makeApp(defaults: defaults, environment: environment, now: now)
        app.advance(now: now)
        guard defaults.storedValues.isEmpty else { return nil }
        let response = PreparedResponse(.json(bytes: app.stateBytes(defaults: defaults)))
        freshStateCache.withLock { $0 = response }
        return response
    }

    /// The registry `application`'s app coordinator type declares.
    private static func restorationRegistry<A: ShellApplication>(of application: A) -> RestorationRegistry {
        RestorationRegistry.of(A.RootCoordinator.self)
    }

    /// Gives the session the snapshot of the controllers when they changed: the registry stores it
    /// when the session is worth storing, and keeps it in memory in any case, so that a request
    /// whose commit fails rebuilds the app as it was last committed. Throws, keeping nothing, when
    /// a screen shown has an owner that does not declare it (`DeclarationError`): the session's
    /// request or work then fails and its live app is dropped, as for any error.
    ///
    /// The snapshot is kept as a value: its bytes are made only when a backend writes them to a
    /// file (the SQLite store, on its writer's thread) or the app is rebuilt from them — never
    /// for the memory store's actions (the Performance article).
    func keep(_ app: LiveApp, in session: SessionContext) throws(DeclarationError) {
        if session.id != session.originalID, !app.root.notifications.isEmpty {
            // Scheduled under the id this request retired (a login, a logout): they go with it.
            app.root.notifications.removeAll()
            app.root.snapshotIsStale = true
        }
        if app.root.storesWithoutValues {
            app.root.storesWithoutValues = false
            session.storesWithoutValues = true
        }
        guard app.stored?.version != app.root.version || app.root.snapshotIsStale else { return }
        if DeclarationCheck.undeclaredOwnerSeen.withLock({ $0 }) {
            try DeclarationCheck.checkOwners(of: app.root, restoration.owners)
        }
        app.root.snapshotIsStale = false
        let kept = app.snapshot.kept
        app.stored = (app.root.version, kept)
        session.keptSnapshot = kept
    }
}
