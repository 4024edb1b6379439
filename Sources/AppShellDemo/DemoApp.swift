import AppShell
import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import FoundationEssentials

/// The demo application: its session registry over the configured store, and its routes with
/// static files from the public directory behind them.
public final class DemoApp: Sendable {
    /// The configuration the app was built from.
    public let configuration: AppConfiguration
    /// Every session, over the configured backend.
    public let sessions: SessionRegistry
    /// How the session id travels.
    public let cookie: SessionCookie
    /// The server's counters, shown at `/metrics`.
    public let statistics = ServerStatistics()
    /// What the demo's coordinators share (users, login limiter, splash delay).
    public let environment: DemoEnvironment
    /// The app shell serving the demo.
    public let shell: Shell

    /// Opens the store and builds the app. Throws when the store cannot be opened (a corrupt or
    /// unreadable SQLite file is never replaced). `verifyPassword` checks a password against its
    /// stored hash (tests pass one that takes as long as they say).
    public init(
        configuration: AppConfiguration,
        verifyPassword: @escaping @Sendable (String, String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        }
    ) throws(StoreError) {
        self.configuration = configuration
        let backend: any DefaultsBackend
        switch configuration.store {
        case .memory: backend = MemoryDefaultsBackend()
        case .sqlite: backend = try SQLiteDefaultsBackend(path: configuration.storePath)
        }
        sessions = SessionRegistry(configuration: configuration.sessions, backend: backend)
        cookie = SessionCookie(baseName: configuration.cookieName, secure: configuration.secureCookies)
        environment = DemoEnvironment(
            users: configuration.users, splashDelayMilliseconds: Int64(configuration.splashDelayMilliseconds),
            reminderDelayMilliseconds: Int64(configuration.reminderDelayMilliseconds),
            passwordChecks: WorkerPool(
                threads: configuration.passwordCheckThreads, queueLimit: configuration.passwordCheckQueue,
                name: "appshell-password-checks", priority: configuration.passwordCheckPriority),
            verifyPassword: verifyPassword)
        let key: [UInt8]
        switch configuration.store {
        case .memory: key = CSRFTokens.randomKey()
        case .sqlite: key = try CSRFKeyFile.load(besides: configuration.storePath)
        }
        shell = Shell(
            application: DemoShell(environment: environment), registry: sessions, cookie: cookie, csrfKey: key,
            assets: AssetVersions(directory: configuration.publicDirectory, names: ["app.css", "app.js", "splash.svg"]))
    }

    /// Where the OpenAPI document of the HTTP API is served.
    public static let apiDescriptionPath = "/api/openapi.json"
    /// The OpenAPI document's file in the public directory (also served there as a static file).
    public static let apiDescriptionFile = "openapi.json"

    /// The responder for every request: the routes first, static files for any other path.
    /// Throws when the public directory does not exist.
    public func makeResponder() throws(HTTPServerError) -> Router {
        let files = try StaticFiles(
            directory: configuration.publicDirectory, maxAge: configuration.staticMaxAgeSeconds)
        var router = Router(fallback: files)
        let healthy = JSON.object(["status": "ok"]).serialized
        router.get("/healthz") { _ in .json(bytes: healthy) }
        // The API's description, read once: it describes this build's routes, so it is served as
        // it was when the server started (no session, nothing to change).
        let description = FileManager.default.contents(
            atPath: configuration.publicDirectory + "/" + DemoApp.apiDescriptionFile)
        router.get(DemoApp.apiDescriptionPath) { _ in
            guard let description else {
                throw HTTPError.notFound(
                    "no API description: \(DemoApp.apiDescriptionFile) is not in the public directory")
            }
            return .json(bytes: Array(description))
        }
        shell.install(into: &router, pagePaths: DemoShell.pagePaths)
        router.get("/metrics") { [sessions, statistics] _ in
            var response = Response.text(
                """
                # HELP appshell_http_requests_completed_total Requests completed since start.
                # TYPE appshell_http_requests_completed_total counter
                appshell_http_requests_completed_total \(statistics.completed)
                # HELP appshell_http_requests_in_flight Requests being processed.
                # TYPE appshell_http_requests_in_flight gauge
                appshell_http_requests_in_flight \(statistics.inFlight)
                # HELP appshell_http_connections_open Open client connections.
                # TYPE appshell_http_connections_open gauge
                appshell_http_connections_open \(statistics.openConnections)
                # HELP appshell_sessions_in_memory Sessions held in memory.
                # TYPE appshell_sessions_in_memory gauge
                appshell_sessions_in_memory \(sessions.count)
                # HELP appshell_sessions_created_total Sessions created since start.
                # TYPE appshell_sessions_created_total counter
                appshell_sessions_created_total \(sessions.createdCount.load(ordering: .relaxed))

                """)
            response.headers.replaceOrAdd(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            response.headers.add(name: "Cache-Control", value: "no-store")
            return response
        }
        return router
    }
}
