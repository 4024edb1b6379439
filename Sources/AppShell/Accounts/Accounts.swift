import AppShellAuth
import AppShellConcurrency
import AppShellHTTP

/// What the framework's login flow shares across sessions: who can log in, the login throttle,
/// the threads that check passwords and each client network's share of them. The server makes one
/// from its configuration (`ShellServer.accounts`); every session's coordinators reach it as
/// `root.environment.accounts`.
public final class Accounts: Sendable {
    /// Username → Argon2id password hash.
    private let users: Locked<[String: String]>
    /// Whether anyone may make an account (`AccountsConfiguration.signUp`).
    public let allowsSignUp: Bool
    /// Sign-ups per client network within the hour.
    let signUps: LoginRateLimiter
    /// Failed logins per session, client, username and (username, client) pair.
    public let throttle: LoginThrottle
    /// The threads that check passwords (each Argon2id check holds 64 MiB and about 65 ms of a
    /// core), with a bounded queue: a login waits there with its request suspended, never on a
    /// server thread, and one that finds the queue full is refused at once.
    public let passwordChecks: WorkerPool
    /// The checks each client network may have in `passwordChecks` at once.
    public let checkQuota: PasswordCheckQuota
    /// Whether a password matches a stored hash (`PasswordHash.verify`; tests pass a slower one).
    let verifyPassword: @Sendable (_ password: String, _ hash: String) -> Bool

    /// The accounts `configuration` describes; `verifyPassword` checks a password against its
    /// stored hash (tests pass one that takes as long as they say).
    public init(
        configuration: AccountsConfiguration,
        verifyPassword: @escaping @Sendable (_ password: String, _ hash: String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        }
    ) {
        users = Locked(
            Dictionary(
                configuration.users.map { (AccountRules.canonicalName($0.key), $0.value) },
                uniquingKeysWith: { first, _ in first }))
        allowsSignUp = configuration.signUp
        signUps = LoginRateLimiter(maxFailures: configuration.signUpsPerNetworkPerHour, window: 3600)
        throttle = LoginThrottle(policy: configuration.throttlePolicy)
        passwordChecks = WorkerPool(
            threads: configuration.passwordCheckThreads, queueLimit: configuration.passwordCheckQueue,
            name: "appshell-password-checks", priority: configuration.passwordCheckPriority,
            share: configuration.passwordCheckCoreShare)
        checkQuota = PasswordCheckQuota(perClient: configuration.passwordChecksPerClient)
        self.verifyPassword = verifyPassword
    }

    /// Whether `password` is `username`'s (slow: run it on `passwordChecks`). An unknown username
    /// costs the same time as a known one, so the answer's timing does not tell which usernames
    /// exist.
    public func authenticate(username: String, password: String) -> Bool {
        guard let hash = passwordHash(of: AccountRules.canonicalName(username)) else {
            PasswordHash.verifyDummy(password: password)
            return false
        }
        return verifyPassword(password, hash)
    }

    /// The password hash of the account `name` (its canonical name), if there is one.
    func passwordHash(of name: String) -> String? { users.withLock { $0[name] } }

    /// Makes the account `name` (its canonical name) with `passwordHash`; false, making nothing,
    /// when the name is taken.
    func insert(_ name: String, passwordHash: String) -> Bool {
        users.withLock { users in
            guard users[name] == nil else { return false }
            users[name] = passwordHash
            return true
        }
    }

    /// Sets the password hash of the account `name` (its canonical name); false when there is no
    /// such account.
    func setPasswordHash(_ passwordHash: String, of name: String) -> Bool {
        users.withLock { users in
            guard users[name] != nil else { return false }
            users[name] = passwordHash
            return true
        }
    }

    /// The accounts' names, sorted.
    public var names: [String] { users.withLock { $0.keys.sorted() } }

    /// Says on standard output, as a `passwordChecks` event, what the password-check threads run
    /// with: the priority asked for and what the kernel granted (a refused slice or priority is
    /// said, and the checks run anyway).
    public func logScheduling() {
        AccessLog.event(
            "passwordChecks",
            [
                "threads": .integer(passwordChecks.threads), "priority": .string(passwordChecks.priority.rawValue),
                "scheduling": .string(passwordChecks.schedulingDescription()),
            ])
    }
}

/// The password checks (Argon2id) waiting for and running on their worker pool, at `/metrics`.
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

/// The key of the accounts in the environment: none outside a server's shell.
private struct AccountsKey: EnvironmentKey {
    static let defaultValue: Accounts? = nil
}

extension EnvironmentValues {
    /// The server's accounts (`ShellServer.accounts`): what the framework's login flow uses; `nil`
    /// for a shell made without a server.
    public var accounts: Accounts? {
        get { self[AccountsKey.self] }
        set { self[AccountsKey.self] = newValue }
    }
}
