import AppShellHTTP
import AppShellSessions

/// What the framework is configured with: how the server listens and its limits, the static files,
/// the session store and cookie, and the session timeouts. Its keys (`ShellConfiguration.keys`) are
/// the first part of every app's configuration; an app adds its own (see `AppConfiguration`).
public struct ShellConfiguration: AppConfiguration, Equatable {
    /// How the HTTP server listens and its limits.
    public var server = HTTPServerConfiguration()
    /// The directory whose files are served as they are (relative to the working directory).
    public var publicDirectory = "Public"
    /// `Cache-Control: max-age` for static files, in seconds.
    public var staticMaxAgeSeconds = 3600
    /// Which backend keeps session defaults.
    public var store = StoreKind.sqlite
    /// The SQLite file, when `store` is `.sqlite`.
    public var storePath = "data/appshell.sqlite"
    /// The Redis server, when `store` is `.redis` (a `RedisURL`: checked when the configuration
    /// is read).
    public var storeURL = "redis://127.0.0.1:6379/0"
    /// The session cookie's name (before the `__Host-` prefix).
    public var cookieName = "appshell_session"
    /// Whether the cookie is `Secure` with the `__Host-` prefix (serve over HTTPS).
    public var secureCookies = false
    /// The bearer token `GET /metrics` asks for (`Authorization: Bearer <token>`); `nil`: the
    /// metrics are served to loopback clients only (see `MetricsAccess`).
    public var metricsToken: String?
    /// The lowest level logged (`LoggingSystem.logLevel`, applied by `ShellCommand`): `info` writes
    /// the access log and up; `notice` leaves the access log out; `debug` adds libmicrohttpd's
    /// expected messages.
    public var logLevel = Logger.Level.info
    /// Session timeouts and the in-memory cap.
    public var sessions = SessionConfiguration()
    /// Accounts: who can log in, and how logins are limited and their passwords checked.
    public var accounts = AccountsConfiguration()
    /// Requests' writes that may wait for the SQLite store's writer (group commit); one more gets
    /// 503 with `Retry-After` and changes nothing.
    public var storeWriteQueue = ShellConfiguration.defaultStoreWriteQueue
    /// The default of `storeWriteQueue`.
    public static let defaultStoreWriteQueue = 1024
    /// The longest body an action may have (`POST /api/actions` and `/actions`; within the server's
    /// `maxBodyBytes`): an action is a name and a few fields, and a longer body is an attempt to
    /// hold the server's memory (500 unfinished 1 MiB uploads held 780 MiB, issue 31).
    public var maxActionBodyBytes = ShellConfiguration.defaultMaxActionBodyBytes
    /// The default of `maxActionBodyBytes`: 16 KiB.
    public static let defaultMaxActionBodyBytes = 16_384
    /// Sessions one client (an IPv4 address, an IPv6 /64) may start a minute that the server holds
    /// in memory (a visitor whose cookie comes back); one more gets 429 with `Retry-After`. 0: no
    /// limit.
    public var newSessionsPerMinute = ShellConfiguration.defaultNewSessionsPerMinute
    /// The default of `newSessionsPerMinute`: 600 at once, then 10 a second.
    public static let defaultNewSessionsPerMinute = 600
    /// The bytes the answers the live apps keep prepared (their state, their page) may hold in
    /// all; past it answers are made for each request and not kept (see `CachedAnswerBudget`).
    public var maxCachedAnswerBytes = ShellConfiguration.defaultMaxCachedAnswerBytes
    /// The default of `maxCachedAnswerBytes`: 256 MiB (about 60 000 sessions' state and page).
    public static let defaultMaxCachedAnswerBytes = 268_435_456
    /// Actions that may await work at once (`RootController.awaiting`: another service, a
    /// password check), every session's together; one more is refused with 503 and `Retry-After`,
    /// nothing changed. Each holds a suspended connection and a task while it waits.
    public var maxAsyncActions = ShellConfiguration.defaultMaxAsyncActions
    /// The default of `maxAsyncActions`: 256, a quarter of the default `maxConnections`.
    public static let defaultMaxAsyncActions = 256

    /// The backends `store` can name.
    public enum StoreKind: String, Sendable {
        /// The embedded SQLite file at `storePath`: survives restarts.
        case sqlite
        /// Memory only: for tests and benchmarks; nothing survives a restart.
        case memory
        /// A Redis server at `storeURL`, which several instances can share.
        case redis
    }

    /// The defaults.
    public init() {}

    /// The framework's part: the configuration itself.
    public var shell: ShellConfiguration {
        get { self }
        set { self = newValue }
    }

    /// HTTPS: a port that speaks plain HTTP and answers every request but `/healthz` with `301`
    /// to the same URL over HTTPS (`HTTPSRedirect`); `nil`: none.
    public var httpRedirectPort: Int?

    /// Whether the server speaks HTTPS (`tlsCertificatePath` and `tlsKeyPath`).
    public var servesHTTPS: Bool { server.tls != nil }

    /// Sets the HTTPS files (an empty path: not set; neither set: plain HTTP).
    mutating func setTLSFiles(certificatePath: String, keyPath: String) {
        server.tls =
            certificatePath.isEmpty && keyPath.isEmpty
            ? nil : HTTPServerConfiguration.TLSFiles(certificatePath: certificatePath, keyPath: keyPath)
    }

    /// Checks the HTTPS files: both set or neither, and a pair the server can use now (readable,
    /// PEM, the key the certificate's, the certificate valid). Run when the configuration is
    /// loaded, so that a bad pair stops the start with one line naming the setting (exit 2).
    public func checkTLSFiles() throws(ConfigurationError) {
        guard let files = server.tls else {
            if httpRedirectPort != nil {
                throw ConfigurationError(
                    "\"httpRedirectPort\" needs HTTPS (\"tlsCertificatePath\" and \"tlsKeyPath\"): it redirects there")
            }
            return
        }
        if let redirect = httpRedirectPort, redirect == server.port {
            throw ConfigurationError("\"httpRedirectPort\" must differ from \"port\" (\(redirect))")
        }
        if files.certificatePath.isEmpty {
            throw ConfigurationError("\"tlsCertificatePath\" must be set with \"tlsKeyPath\" (HTTPS needs both)")
        }
        if files.keyPath.isEmpty {
            throw ConfigurationError("\"tlsKeyPath\" must be set with \"tlsCertificatePath\" (HTTPS needs both)")
        }
        do {
            _ = try TLSIdentity.load(certificatePath: files.certificatePath, keyPath: files.keyPath)
        } catch {
            throw ConfigurationError(error.description)
        }
    }

    /// Whether the server is bound to a loopback address (reachable only from this machine).
    public var bindsLoopback: Bool {
        let host = server.host
        return host.hasPrefix("127.") || host == "::1" || host.lowercased().hasPrefix("::ffff:127.")
    }
}
