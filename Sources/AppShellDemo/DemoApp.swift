import AppShell

/// The demo application on the framework's `ShellServer`: its environment (users, login limiter,
/// delays, password-check threads), its shell, its chrome and installable shell, and its
/// password checks' `/metrics` families.
public final class DemoApp: Sendable {
    /// The configuration the app was built from.
    public let configuration: DemoConfiguration
    /// What the demo's coordinators share (users, login limiter, splash delay).
    public let environment: DemoEnvironment
    /// The server: store, sessions, routes, graceful shutdown.
    public let server: ShellServer

    /// Every session, over the configured backend.
    public var sessions: SessionRegistry { server.sessions }
    /// How the session id travels.
    public var cookie: SessionCookie { server.cookie }
    /// The server's counters, shown at `/metrics`.
    public var statistics: ServerStatistics { server.statistics }
    /// The app shell serving the demo.
    public var shell: Shell { server.shell }

    /// What every page shows around the screen: the demo's name and stylesheet (and the shell's page
    /// script, which every chrome loads).
    public static let chrome = PageChrome(name: "AppShell", stylesheets: ["app.css"])

    /// Opens the store and builds the app. Throws when the app's declarations are wrong
    /// (`DeclarationError`) or the store cannot be opened (`StoreError`: a corrupt or unreadable
    /// SQLite file is never replaced). `verifyPassword` checks a password against its
    /// stored hash (tests pass one that takes as long as they say); `clock` is the shell's, in
    /// milliseconds since 1970 (tests move it by hand).
    public init(
        configuration: DemoConfiguration,
        verifyPassword: @escaping @Sendable (String, String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        },
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) throws {
        self.configuration = configuration
        // Before the first check: the server's threads must not wait for a check's memory map.
        PasswordHash.reserveHeapHeadroom()
        let environment = DemoEnvironment(
            users: configuration.users, splashDelayMilliseconds: Int64(configuration.splashDelayMilliseconds),
            reminderDelayMilliseconds: Int64(configuration.reminderDelayMilliseconds),
            throttle: LoginThrottle(policy: configuration.throttlePolicy),
            passwordChecks: WorkerPool(
                threads: configuration.passwordCheckThreads, queueLimit: configuration.passwordCheckQueue,
                name: "appshell-password-checks", priority: configuration.passwordCheckPriority,
                share: configuration.passwordCheckCoreShare),
            checkQuota: PasswordCheckQuota(perClient: configuration.passwordChecksPerClient),
            verifyPassword: verifyPassword)
        self.environment = environment
        let directory = configuration.publicDirectory
        let assets = AssetVersions(directory: directory, names: DemoWebApp.shellFiles)
        server = try ShellServer(
            configuration: configuration.shell, application: DemoShell(environment: environment),
            chrome: DemoApp.chrome, assets: assets,
            webApp: DemoWebApp.make(directory: directory, assets: assets),
            metrics: [PasswordCheckMetrics(pool: environment.passwordChecks)],
            // Logins still queued were answered 503 by the shutdown: their checks are skipped.
            stopping: { environment.passwordChecks.stop() }, clock: clock)
    }

    /// Says on standard output, as a `passwordChecks` event, what the password-check threads run
    /// with: the priority asked for and what the kernel granted (a refused slice or priority is
    /// said, and the checks run anyway).
    public func logPasswordCheckScheduling() {
        let pool = environment.passwordChecks
        AccessLog.event(
            "passwordChecks",
            [
                "threads": .integer(pool.threads), "priority": .string(pool.priority.rawValue),
                "scheduling": .string(pool.schedulingDescription()),
            ])
    }

    /// The responder for every request: the routes first, static files for any other path.
    /// Throws when the public directory does not exist.
    public func makeResponder() throws(HTTPServerError) -> Router { try server.makeResponder() }

    /// `appshell hash-password`: one line of standard input (typed without echo on a terminal)
    /// becomes an Argon2id hash for the `users` key of config.json.
    public static let hashPassword = ShellCommand.Subcommand(
        name: "hash-password", summary: "reads a password on standard input, prints its hash"
    ) { _ in
        let terminal = PasswordPrompt.isTerminal
        if terminal { PasswordPrompt.write("Password: ") }
        let password = PasswordPrompt.readLine(echo: !terminal)
        if terminal { PasswordPrompt.write("\n") }
        guard let password, !password.isEmpty else {
            AccessLog.error("hash-password: no password on standard input")
            return ShellCommand.configurationErrorStatus
        }
        do {
            print(try PasswordHash.make(password: password))
            return 0
        } catch {
            AccessLog.error("hash-password: \(error)")
            return 1
        }
    }
}

/// The password checks (Argon2id) waiting for and running on their worker pool.
struct PasswordCheckMetrics: MetricsSource {
    let pool: WorkerPool

    func writeMetrics(into text: inout PrometheusText) {
        text.single(
            "appshell_password_checks_queued", .gauge,
            "Password checks waiting for a thread (at most passwordCheckQueue; a login past it gets 503).",
            pool.queued)
        text.single("appshell_password_checks_running", .gauge, "Password checks running now.", pool.running)
        text.single(
            "appshell_password_check_threads", .gauge, "Threads that check passwords (passwordCheckThreads).",
            pool.threads)
    }
}
