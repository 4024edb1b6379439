import AppShellAuth
import AppShellConcurrency
import AppShellHTTP

/// What the framework's login flow shares across sessions: who can log in, the login throttle,
/// the threads that check passwords and each client network's share of them. The server makes one
/// from its configuration (`ShellServer.accounts`); every session's coordinators reach it as
/// `root.environment.accounts`.
public final class Accounts: Sendable {
    /// The accounts the configuration names (`users`): each is put in the store when the store
    /// has no account of that name (a seed: a password changed since is kept).
    private let seed: [String: String]
    /// Where the accounts are kept: the sessions' store (`open(in:)`).
    private let store = Locked<(any DefaultsBackend)?>(nil)
    /// Whether anyone may make an account (`AccountsConfiguration.signUp`).
    public let allowsSignUp: Bool
    /// The most bytes a user's store may hold (`AccountsConfiguration.maxUserStoreBytes`).
    public let maxUserStoreBytes: Int
    /// Sign-ups per client network within the hour.
    let signUps: LoginRateLimiter
    /// Failed logins per session, client, username and (username, client) pair.
    package let throttle: LoginThrottle
    /// The threads that check passwords (each Argon2id check holds 64 MiB and about 65 ms of a
    /// core), with a bounded queue: a login waits there with its request suspended, never on a
    /// server thread, and one that finds the queue full is refused at once.
    package let passwordChecks: WorkerPool
    /// The checks each client network may have in `passwordChecks` at once.
    package let checkQuota: PasswordCheckQuota
    /// Whether a password matches a stored hash (`PasswordHash.verify`; tests pass a slower one).
    let verifyPassword: @Sendable (_ password: String, _ hash: String) -> Bool

    /// The accounts `configuration` describes; `verifyPassword` checks a password against its
    /// stored hash (tests pass one that takes as long as they say). They are kept in the store the
    /// server opens (`ShellServer` calls `open(in:)`).
    public init(
        configuration: AccountsConfiguration,
        verifyPassword: @escaping @Sendable (_ password: String, _ hash: String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        }
    ) {
        seed = configuration.users
        allowsSignUp = configuration.signUp
        maxUserStoreBytes = configuration.maxUserStoreBytes
        signUps = LoginRateLimiter(maxFailures: configuration.signUpsPerNetworkPerHour, window: 3600)
        throttle = LoginThrottle(policy: configuration.throttlePolicy)
        passwordChecks = WorkerPool(
            threads: configuration.passwordCheckThreads, queueLimit: configuration.passwordCheckQueue,
            name: "appshell-password-checks", nice: Self.passwordCheckNice)
        checkQuota = PasswordCheckQuota(perClient: configuration.passwordChecksPerClient)
        self.verifyPassword = verifyPassword
    }

    /// Keeps the accounts in `backend` from now on, and puts there each account of the
    /// configuration's `users` that it does not have yet. Throws when the store cannot be read or
    /// written.
    func open(in backend: any DefaultsBackend, now: Int64) throws(StoreError) {
        store.withLock { $0 = backend }
        for (typed, hash) in seed.sorted(by: { $0.key < $1.key }) {
            // Checked when the configuration was loaded.
            guard let name = try? AccountName(typed) else { continue }
            if try backend.account(named: name.text) == nil {
                _ = try backend.insertAccount(Account(name: name.text, passwordHash: hash, created: now))
            }
        }
    }

    /// The store the accounts are kept in.
    private func backend() throws(StoreError) -> any DefaultsBackend {
        guard let backend = store.withLock({ $0 }) else { throw StoreError("the accounts' store is not open") }
        return backend
    }

    /// Whether `password` is `username`'s (slow: run it on `passwordChecks`). An unknown username
    /// costs the same time as a known one, so the answer's timing does not tell which usernames
    /// exist. Throws when the store cannot be read.
    public func authenticate(username: String, password: String) throws(StoreError) -> Bool {
        let account = try (try? AccountName(username)).flatMap { name throws(StoreError) in
            try backend().account(named: name.text)
        }
        guard let account else {
            PasswordHash.verifyDummy(password: password)
            return false
        }
        return verifyPassword(password, account.passwordHash)
    }

    /// Makes the account `name` with `passwordHash`; false, making nothing, when the name is taken.
    func insert(_ name: AccountName, passwordHash: String, now: Int64) throws(StoreError) -> Bool {
        try backend().insertAccount(Account(name: name.text, passwordHash: passwordHash, created: now))
    }

    /// Sets the password hash of the account `name`; false when there is no such account.
    func setPasswordHash(_ passwordHash: String, of name: String) throws(StoreError) -> Bool {
        try backend().setPasswordHash(passwordHash, ofAccount: name)
    }

    /// The accounts' names, sorted. Throws when the store cannot be read.
    public func names() throws(StoreError) -> [String] { try backend().accountNames() }

    /// The nice value of the password-check threads (Linux's priority of a thread, 0–19; each
    /// check thread sets its own), with the pool's rescheduling tick every millisecond: beside a
    /// server thread at 0 that keeps a core busy, a thread at 6 gets about a fifth of it, and all
    /// of an idle core. Measured with the demo's logins beside its reads (`bench/machinery.py
    /// logins`, every core, nothing pinned, 2026-12-06): at the normal priority the reads made
    /// 0.63× (0.54–1.16) of their rate without logins; at nice 6, 1.12× (0.81–1.40), logins still
    /// getting through (bench/RESULTS.md).
    package static let passwordCheckNice: Int32 = 6
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
