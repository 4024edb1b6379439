import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import FoundationEssentials

/// An app served: its session registry over the configured store, its `Shell`, and the routes
/// every app has — `/healthz`, `/metrics`, the OpenAPI document, the shell's page script, JSON API,
/// pages and event streams, the app's own routes (`ShellApplication.installRoutes`), and static
/// files from the public directory behind them. `run()` serves until
/// SIGTERM or SIGINT and shuts down gracefully.
public final class ShellServer: Sendable {
    /// The framework's configuration the server was built from.
    public let configuration: ShellConfiguration
    /// Every session, over the configured backend.
    package let sessions: SessionRegistry
    /// How the session id travels.
    package let cookie: SessionCookie
    /// The server's counters, shown at `/metrics`.
    package let statistics = ServerStatistics()
    /// The app shell serving the app.
    package let shell: Shell
    /// Who can log in, the login throttle and the password-check threads: what the framework's
    /// login flow uses (`root.environment.accounts`).
    public let accounts: Accounts
    /// The one thread for work at a time with no request: the shell's scheduler (splash,
    /// reminders), the event streams' heartbeats and the session sweeper. `run()` stops it before
    /// the store closes, so no timer work touches a closed store.
    package let timers = TimerQueue(name: "appshell-timers")
    /// The URLs of the app's pages besides `/`.
    package let pagePaths: [String]
    /// Held while a SQLite store is served (`SQLiteServingLock`).
    private let servingLock: SQLiteServingLock?
    /// The app's own `/metrics` sources, after the sessions' families.
    private let metricsSources: [any MetricsSource]
    /// The app's work to stop once the HTTP server has stopped, before the store's writer stops.
    private let stopApplication: @Sendable () -> Void

    /// Checks what `application` declares, then opens the store and builds the shell serving it.
    /// Throws a `DeclarationError` when the app's coordinators declare something that cannot work
    /// (`ShellApplication.checkDeclarations()`: before anything is opened), and a `StoreError`
    /// when the store or the forms' key file cannot be opened (a corrupt or unreadable SQLite file
    /// is never replaced).
    ///
    /// - Parameters:
    ///   - configuration: the framework's part of the app's configuration.
    ///   - application: the app: its screens, coordinators and page URLs.
    ///   - pagePaths: the URLs of the app's pages besides `/`; by default the app's own
    ///     (`ShellApplication.pagePaths`, derived from its routes by a `RoutedApplication`).
    ///   - chrome: what every page shows around the screen: the app's name, stylesheets, scripts.
    ///   - assets: the versions of the public files the pages link (by default: the chrome's
    ///     files in the public directory).
    ///   - webApp: the installable shell (manifest, service worker, offline page), if any.
    ///   - metrics: the app's own `/metrics` sources.
    ///   - stopping: the app's work to stop after the HTTP server stops (its worker pools).
    ///   - accounts: who can log in and how logins are checked; by default the configuration's
    ///     (`ShellConfiguration.accounts`). Tests pass accounts with a password check of their own.
    ///   - clock: the shell's clock in milliseconds since 1970 (`Shell.clock`): the system's, or a
    ///     test's own to move the splash and scheduled work on by hand.
    public init(
        configuration: ShellConfiguration, application: any ShellApplication, pagePaths: [String]? = nil,
        chrome: PageChrome, assets: AssetVersions? = nil, webApp: InstallableWebApp? = nil,
        metrics: [any MetricsSource] = [], stopping: @escaping @Sendable () -> Void = {},
        accounts: Accounts? = nil, clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) throws {
        try application.checkDeclarations()
        self.configuration = configuration
        self.pagePaths = pagePaths ?? application.pagePaths
        let accounts = accounts ?? Accounts(configuration: configuration.accounts)
        self.accounts = accounts
        metricsSources = [PasswordCheckMetrics(pool: accounts.passwordChecks)] + metrics
        // Logins still queued were answered 503 by the shutdown: their checks are skipped.
        stopApplication = {
            accounts.passwordChecks.stop()
            stopping()
        }
        let backend: any DefaultsBackend
        // The form-token key: every instance sharing a store must have the same one.
        let key: [UInt8]
        var relay: (any StoreMessageRelay)?
        var ledger: (any StreamLedger)?
        var servingLock: SQLiteServingLock?
        switch configuration.store {
        case .memory:
            backend = MemoryDefaultsBackend()
            key = CSRFTokens.randomKey()
        case .sqlite:
            backend = try SQLiteDefaultsBackend(path: configuration.storePath)
            // Held while the server runs: `users passwd|remove` wait for it to stop.
            servingLock = try SQLiteServingLock.serving(configuration.storePath)
            key = try CSRFKeyFile.load(besides: configuration.storePath)
        case .redis:
            let redis = try RedisDefaultsBackend(
                url: RedisURL(configuration.storeURL),
                expiry: RedisDefaultsBackend.Expiry(
                    idleSeconds: configuration.sessions.idleTimeoutSeconds,
                    absoluteSeconds: configuration.sessions.absoluteTimeoutSeconds))
            backend = redis
            key = try redis.sharedSecret(named: "csrf-key", making: CSRFTokens.randomKey)
            // The pages a session has open at other instances hear its changes made here.
            // On a cluster, each session's channel is sharded: it lives at its slot's primary.
            relay = try RedisMessageRelay.ofStore(at: redis.url, keyPrefix: redis.keyPrefix)
            // A session's cap on streams holds over all the instances.
            ledger = RedisStreamLedger(url: redis.url, keyPrefix: redis.keyPrefix)
        }
        self.servingLock = servingLock
        // SQLite's and Redis's commits go through one writer thread, many requests' writes per
        // transaction (no server thread waits for the disk or the network); the memory store
        // writes on the request's thread (it never waits).
        sessions = SessionRegistry(
            configuration: configuration.sessions, backend: backend,
            groupCommitQueue: configuration.store == .memory ? nil : configuration.storeWriteQueue,
            // The instances share the form-token key: it seals the cookies of sessions that hold
            // nothing too (another message than a form token's, under another label).
            sealKey: key)
        // The accounts live in the same store; the configuration's `users` seed it.
        try accounts.open(in: backend, now: clock() / 1000)
        // Served over HTTPS, the cookie is `Secure` with the `__Host-` prefix whatever `secureCookies` says.
        cookie = SessionCookie(
            baseName: configuration.cookieName, secure: configuration.secureCookies || configuration.servesHTTPS)
        shell = Shell(
            application: application, registry: sessions, cookie: cookie, chrome: chrome, csrfKey: key,
            assets: assets ?? AssetVersions(directory: configuration.publicDirectory, names: chrome.files),
            webApp: webApp, clock: clock, timers: timers, relay: relay, ledger: ledger,
            maxActionBodyBytes: configuration.maxActionBodyBytes,
            newSessionsPerMinute: configuration.newSessionsPerMinute,
            maxCachedAnswerBytes: configuration.maxCachedAnswerBytes,
            maxAsyncActions: configuration.maxAsyncActions, accounts: accounts)
    }

    /// Where the OpenAPI document of the HTTP API is served.
    public static let apiDescriptionPath = "/api/openapi.json"

    /// The app's OpenAPI document, as `/api/openapi.json` serves it: the routes the responder
    /// serves and the app's pages, files and actions with their typed parameters (`APIDocument`).
    public func apiDescription() throws(HTTPServerError) -> JSON { describe(try makeResponder()) }

    /// The document of what `router` serves.
    private func describe(_ router: Router) -> JSON {
        APIDocument.make(
            for: APIDocument.App(
                name: shell.chrome.name, pagePaths: pagePaths, files: shell.chrome.stylesheets + shell.chrome.scripts,
                cookieName: shell.cookie.name,
                servedPaths: Set(router.routeList.map(\.path)).union([ShellServer.apiDescriptionPath]),
                actions: shell.application.actionCatalog, launchSources: shell.application.launchSources))
    }

    /// The responder for every request: the routes first, static files for any other path.
    /// Throws when the public directory does not exist.
    public func makeResponder() throws(HTTPServerError) -> Router {
        let files = try StaticFiles(
            directory: configuration.publicDirectory, maxAge: configuration.staticMaxAgeSeconds)
        var router = Router(fallback: files)
        let healthy = JSON.object(["status": "ok"]).serialized
        router.get("/healthz") { _ in .json(bytes: healthy) }
        // The shell's page script and base stylesheet, from memory: an app needs no copy in its
        // public directory.
        let maxAge = configuration.staticMaxAgeSeconds
        router.get(PageScript.path, BuiltInFileResponder.pageScript(maxAge: maxAge))
        router.get(BaseStylesheet.path, BuiltInFileResponder.baseStylesheet(maxAge: maxAge))
        shell.install(into: &router, pagePaths: pagePaths)
        shell.application.installRoutes(into: &router, shell: shell)
        let metrics = ShellMetrics(
            sources: [statistics, SessionMetrics(sessions: sessions)] + metricsSources + [
                StoreMetrics(sessions: sessions)
            ])
        let access = MetricsAccess(token: configuration.metricsToken)
        router.get("/metrics") { request in
            try access.check(request)
            return metrics.response()
        }
        // The API's description, made once the routes are known: it describes this build's routes
        // and the app's declarations, so it is served as it was when the server started (no
        // session, nothing to change).
        let description = describe(router).serialized
        router.get(ShellServer.apiDescriptionPath) { _ in .json(bytes: description) }
        return router
    }

    /// How often an HTTPS server looks at its certificate and key files' metadata, in milliseconds:
    /// a renewed pair is served within two looks of being written, without a SIGHUP.
    static let certificateCheckMilliseconds: Int64 = 5000

    /// Says what a reload of the HTTPS certificate (`cause`: SIGHUP, or the files changed) came to:
    /// a `certificate` event, or one line on standard error when the new pair cannot be used and
    /// the old one stays (new connections get the new pair; open ones and their event streams keep
    /// theirs).
    static func report(_ reload: TLSReload?, cause: String) {
        switch reload {
        case nil:
            Logger.appshell.error("\(cause): nothing to reload (the server speaks plain HTTP)")
        case .loaded(let serial):
            AccessLog.event(
                "certificate",
                ["reloaded": .bool(true), "cause": .string(cause), "certificateSerialNumber": .string(serial)])
        case .unchanged:
            AccessLog.event(
                "certificate",
                ["reloaded": .bool(false), "cause": .string(cause), "reason": .string("the files are unchanged")])
        case .failed(let reason):
            Logger.appshell.error("\(cause): the certificate in use stays: \(reason)")
        }
    }

    /// Starts the timers' thread, which runs the work no request asks for (a user's other pages
    /// rendered again after a change), for a server whose responder something else serves
    /// (`makeResponder()` in a test's `TestServer`); `run()` starts it itself.
    public func startTimers() { timers.start() }

    /// Stops what a server whose responder something else served still holds, as `run()` does
    /// once its HTTP server has stopped: the app's `stopping` work and the password checks, the
    /// store's writer (committing what is left), the timers' thread, and the store, which is
    /// closed. Call it once, when nothing sends requests any more.
    public func stop() {
        stopApplication()
        sessions.stopWriter()
        timers.stop()
        sessions.backend.close()
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully: the HTTP server stops (in-flight
    /// requests finish within `shutdownTimeoutSeconds`, event streams end and their heartbeats
    /// stop), then the app's `stopping` work, then the store's writer commits what is left, the
    /// scheduler and the sweeper stop, the timer thread ends, and the store closes. Returns the
    /// process's exit status: 0, or 1 when the server cannot start. Call
    /// `TerminationSignal.block()` before any thread starts (`ShellCommand.run` does).
    public func run() -> Int32 {
        let server: HTTPServer
        do {
            server = HTTPServer(
                configuration: configuration.server, responder: try makeResponder(), statistics: statistics,
                timers: timers)
            try server.start()
        } catch {
            Logger.appshell.error("cannot start: \(error)")
            return 1
        }
        if !configuration.bindsLoopback && configuration.server.allowedHosts.entries.isEmpty {
            Logger.appshell.warning(
                "\"allowedHosts\" is empty: only requests for localhost, 127.0.0.1, [::1] or an IP address "
                    + "are served (others get 421); list the names clients use")
        }
        if let redis = sessions.backend as? RedisDefaultsBackend, let warning = redis.evictionWarning() {
            Logger.appshell.warning(warning)
        }
        timers.start()
        sessions.startSweeper(timers: timers)
        shell.startScheduler()
        shell.startRelaying()
        shell.startEndingStreamsOfEndedSessions(
            everyMilliseconds: Int64(configuration.sessions.sweepIntervalSeconds) * 1000)
        let host =
            configuration.server.host.contains(":") ? "[\(configuration.server.host)]" : configuration.server.host
        var listening: [String: JSON] = [
            "url": .string("\(configuration.servesHTTPS ? "https" : "http")://\(host):\(server.port)"),
            "port": .integer(server.port),
            "threads": .integer(configuration.server.threads), "store": .string(configuration.store.rawValue),
        ]
        // Which server, without its password.
        if let redis = sessions.backend as? RedisDefaultsBackend {
            listening["storeURL"] = .string(redis.url.description)
        }
        if let serial = server.certificateSerialNumber { listening["certificateSerialNumber"] = .string(serial) }
        AccessLog.event("listening", listening)
        // HTTPS: a plain-HTTP port that sends every request there (80 → 443).
        var redirect: HTTPServer?
        if let port = configuration.httpRedirectPort {
            var plain = configuration.server
            plain.tls = nil
            plain.port = port
            plain.threads = 1
            let started = HTTPServer(configuration: plain, responder: HTTPSRedirect(httpsPort: server.port))
            do {
                try started.start()
            } catch {
                Logger.appshell.error("cannot start the redirect to HTTPS: \(error)")
                _ = server.shutdown(timeoutSeconds: 0)
                return 1
            }
            redirect = started
            AccessLog.event(
                "listening", ["url": .string("http://\(host):\(started.port)"), "redirectsTo": .string("https")])
        }
        let certificateCheck =
            configuration.servesHTTPS
            ? timers.schedule(every: Self.certificateCheckMilliseconds) {
                if let reload = server.reloadCertificateIfFilesChanged() {
                    Self.report(reload, cause: "the files changed")
                }
            } : nil
        var signal = TerminationSignal.wait()
        while signal == TerminationSignal.reload {
            Self.report(server.reloadCertificate(), cause: "SIGHUP")
            signal = TerminationSignal.wait()
        }
        if let certificateCheck { timers.cancel(certificateCheck) }
        AccessLog.event("stopping", ["signal": .integer(Int(signal))])
        _ = redirect?.shutdown(timeoutSeconds: 1)
        let finished = server.shutdown()
        // Work the app queued for requests that the shutdown answered (503) is skipped.
        stopApplication()
        // The writes of every answered request are committed; the writer commits what is left.
        sessions.stopWriter()
        shell.stopScheduler()
        shell.stopRelaying()
        sessions.stopSweeper()
        // The last timer work has returned: nothing runs on the store any more but this thread.
        timers.stop()
        // Closed here rather than left to the process's exit: the last close checkpoints the
        // write-ahead log into the file and removes it (references still held elsewhere, by a
        // stream or a connection the daemon dropped, would otherwise keep it open to the end).
        sessions.backend.close()
        AccessLog.event("stopped", ["inFlightFinished": .bool(finished)])
        return 0
    }
}
