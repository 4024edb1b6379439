import AppShellHTTP
import AppShellJSON

extension ShellConfiguration {
    /// Every key of the framework, in the order the Configuration article lists them; an app's configuration
    /// scopes them to its `shell` part and adds its own.
    public static let keys: [ConfigurationKey<ShellConfiguration>] =
        [
            ConfigurationKey("host", .address, "address to bind (IPv4 or IPv6 literal)") {
                $1.server.host = $0.stringValue!
            },
            ConfigurationKey("port", .integer(0...65535), "TCP port; 0 picks a free one") {
                $1.server.port = $0.integerValue!
            },
            ConfigurationKey("threads", .integer(1...1024), "event loops, a thread each (default: one per core)") {
                $1.server.threads = $0.integerValue!
            },
            ConfigurationKey("publicDirectory", .string, "directory of static files") {
                $1.publicDirectory = $0.stringValue!
            },
            ConfigurationKey("staticMaxAgeSeconds", .integer(0...31_536_000), "Cache-Control max-age of static files") {
                $1.staticMaxAgeSeconds = $0.integerValue!
            },
            ConfigurationKey("maxBodyBytes", .integer(0...1_073_741_824), "largest request body; 413 beyond") {
                $1.server.maxBodyBytes = $0.integerValue!
            },
            ConfigurationKey(
                "maxActionBodyBytes", .integer(256...1_073_741_824), "largest action body (POST /api/actions, /actions)"
            ) { $1.maxActionBodyBytes = $0.integerValue! },
            ConfigurationKey(
                "maxBufferedBodyBytes", .integer(65_536...68_719_476_736),
                "bytes all request bodies being received may hold; 503 beyond"
            ) { $1.server.maxBufferedBodyBytes = $0.integerValue! },
            ConfigurationKey(
                "connectionMemoryBytes", .integer(4096...16_777_216),
                "per-connection memory; request line and headers must fit"
            ) { $1.server.connectionMemoryBytes = $0.integerValue! },
            ConfigurationKey("maxConnections", .integer(1...1_000_000), "open connections at most") {
                $1.server.maxConnections = $0.integerValue!
            },
            ConfigurationKey(
                "maxConnectionsPerIP", .integer(0...1_000_000), "open connections per client IP; 0: no limit"
            ) {
                $1.server.maxConnectionsPerIP = $0.integerValue!
            },
            ConfigurationKey("idleTimeoutSeconds", .integer(1...86_400), "idle connection timeout") {
                $1.server.idleTimeoutSeconds = $0.integerValue!
            },
            ConfigurationKey(
                "keepAliveTimeoutSeconds", .integer(1...3600),
                "how long a kept-alive connection waits for its next request"
            ) { $1.server.keepAliveTimeoutSeconds = $0.integerValue! },
            ConfigurationKey(
                "shutdownTimeoutSeconds", .integer(0...3600), "grace period for in-flight requests on SIGTERM"
            ) {
                $1.server.shutdownTimeoutSeconds = $0.integerValue!
            },
            ConfigurationKey("accessLog", .boolean, "one JSON line per request on stdout") {
                $1.server.accessLog = $0.boolValue!
            },
            ConfigurationKey(
                "logLevel", .choice(Logger.Level.allCases.map(\.rawValue)),
                "lowest level logged (trace, debug, info, notice, warning, error, critical)"
            ) { $1.logLevel = Logger.Level(rawValue: $0.stringValue!) ?? .info },
            ConfigurationKey("store", .choice(["sqlite", "memory", "redis"]), "where session defaults live") {
                $1.store = ShellConfiguration.StoreKind(rawValue: $0.stringValue!) ?? .sqlite
            },
            ConfigurationKey("storePath", .string, "the SQLite file (its folder is created)") {
                $1.storePath = $0.stringValue!
            },
            ConfigurationKey(
                "storeURL", .redisURL,
                "the Redis server or Redis Cluster (redis-cluster://, some of its nodes), when store is redis (password and database in the URL)"
            ) {
                $1.storeURL = $0.stringValue!
            },
            ConfigurationKey(
                "newSessionsPerMinute", .integer(0...1_000_000),
                "sessions held in memory one client may start a minute; 429 beyond (0: no limit)"
            ) { $1.newSessionsPerMinute = $0.integerValue! },
            ConfigurationKey(
                "maxCachedAnswerBytes", .integer(0...68_719_476_736),
                "bytes the live apps' prepared answers may hold in all; beyond, answers are not kept"
            ) { $1.maxCachedAnswerBytes = $0.integerValue! },
            ConfigurationKey(
                "maxAsyncActions", .integer(1...1_000_000),
                "actions awaiting work (another service, a password check) at once; 503 with Retry-After beyond"
            ) { $1.maxAsyncActions = $0.integerValue! },
            ConfigurationKey("cookieName", .token, "session cookie name") { $1.cookieName = $0.stringValue! },
            ConfigurationKey(
                "metricsToken", .string, "bearer token for GET /metrics from anywhere (unset: loopback clients only)"
            ) { $1.metricsToken = $0.stringValue!.isEmpty ? nil : $0.stringValue! },
            ConfigurationKey("secureCookies", .boolean, "__Host- prefix and Secure attribute (HTTPS only)") {
                $1.secureCookies = $0.boolValue!
            },
            ConfigurationKey("tlsCertificatePath", .string, "HTTPS: PEM certificate chain (with tlsKeyPath)") {
                $1.setTLSFiles(certificatePath: $0.stringValue!, keyPath: $1.server.tls?.keyPath ?? "")
            },
            ConfigurationKey("tlsKeyPath", .string, "HTTPS: PEM private key of tlsCertificatePath") {
                $1.setTLSFiles(certificatePath: $1.server.tls?.certificatePath ?? "", keyPath: $0.stringValue!)
            },
            ConfigurationKey(
                "handshakeTimeoutSeconds", .integer(1...3600),
                "HTTPS: how long a new connection may take to shake hands and begin its first request"
            ) { $1.server.handshakeTimeoutSeconds = $0.integerValue! },
            ConfigurationKey(
                "httpRedirectPort", .integer(1...65535), "HTTPS: a plain-HTTP port that redirects to HTTPS (301)"
            ) { $1.httpRedirectPort = $0.integerValue! },
            ConfigurationKey(
                "strictTransportSecuritySeconds", .integer(0...315_360_000),
                "HTTPS: Strict-Transport-Security max-age; 0: none"
            ) { $1.server.strictTransportSecuritySeconds = $0.integerValue! },
            ConfigurationKey("sessionIdleTimeoutSeconds", .integer(1...31_536_000), "idle session timeout") {
                $1.sessions.idleTimeoutSeconds = Int64($0.integerValue!)
            },
            ConfigurationKey("sessionAbsoluteTimeoutSeconds", .integer(1...31_536_000), "absolute session timeout") {
                $1.sessions.absoluteTimeoutSeconds = Int64($0.integerValue!)
            },
            ConfigurationKey("maxSessionsInMemory", .integer(1...100_000_000), "sessions held in memory at most") {
                $1.sessions.maxSessionsInMemory = $0.integerValue!
            },
            ConfigurationKey(
                "sessionSweepIntervalSeconds", .integer(1...86_400), "how often expired sessions are removed"
            ) {
                $1.sessions.sweepIntervalSeconds = $0.integerValue!
            },
            ConfigurationKey(
                "maxEventStreams", .integer(1...1_000_000), "open event streams at most (within 3/4 of maxConnections)"
            ) { $1.server.maxEventStreams = $0.integerValue! },
            ConfigurationKey(
                "maxEventStreamsPerIP", .integer(0...1_000_000),
                "open event streams per client IP (within 3/4 of maxConnectionsPerIP); 0: no limit of its own"
            ) { $1.server.maxEventStreamsPerIP = $0.integerValue! },
            ConfigurationKey(
                "eventStreamBacklogBytes", .integer(1024...1_073_741_824),
                "bytes an event stream may hold for a client that does not read; beyond, the stream is ended"
            ) { $1.server.eventStreamBacklogBytes = $0.integerValue! },
            ConfigurationKey("allowedHosts", .hostList, "host names served besides loopback names and IP addresses") {
                $1.server.allowedHosts =
                    (try? AllowedHosts(ConfigurationKey<ShellConfiguration>.strings($0))) ?? .loopback
            },
            ConfigurationKey("trustedProxies", .proxyList, "proxies whose X-Forwarded-For gives the client address") {
                $1.server.trustedProxies =
                    (try? TrustedProxies(ConfigurationKey<ShellConfiguration>.strings($0))) ?? .none
            },
            ConfigurationKey(
                "storeWriteQueue", .integer(1...1_000_000), "writes waiting for the SQLite store's writer at most"
            ) { $1.storeWriteQueue = $0.integerValue! },
        ] + AccountsConfiguration.keys.map { $0.scoped(to: \ShellConfiguration.accounts) }
}
