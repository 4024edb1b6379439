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
        // SQLite's commits go through one writer thread, many requests' writes per transaction;
        // the memory store writes on the request's thread (it never waits).
        sessions = SessionRegistry(
            configuration: configuration.sessions, backend: backend,
            groupCommitQueue: configuration.store == .sqlite ? configuration.storeWriteQueue : nil)
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
        let assets = AssetVersions(directory: configuration.publicDirectory, names: DemoWebApp.shellFiles)
        shell = Shell(
            application: DemoShell(environment: environment), registry: sessions, cookie: cookie, csrfKey: key,
            assets: assets, webApp: DemoWebApp.make(directory: configuration.publicDirectory, assets: assets))
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
        let metrics = DemoMetrics(sources: [
            statistics, SessionMetrics(sessions: sessions), PasswordCheckMetrics(pool: environment.passwordChecks),
            StoreMetrics(sessions: sessions),
        ])
        router.get("/metrics") { _ in metrics.response() }
        return router
    }
}

/// The store writer's counters for `/metrics` (commits, batches, writes per batch, errors,
/// commit latency, writes queued); nothing for a store without a writer (memory).
struct StoreMetrics: MetricsSource {
    let sessions: SessionRegistry

    func writeMetrics(into text: inout PrometheusText) {
        guard let writer = sessions.writer else { return }
        text.append(writer.statistics.snapshot.prometheusText())
        text.single(
            "appshell_store_writes_queued", .gauge, "Writes waiting for the store writer.", writer.queued)
    }
}
