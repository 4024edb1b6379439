import AppShell

/// What the app's coordinators share across sessions: who can log in, the login throttle, the
/// threads that check passwords, and how long the splash's start-up work takes.
public final class NotesEnvironment: Sendable {
    /// Username → Argon2id hash (`notes hash-password` makes one).
    public let users: [String: String]
    /// Failed logins per session, client, username and (username, client): the framework's throttle.
    public let throttle: LoginThrottle
    /// The threads that check passwords (Argon2id holds 64 MiB and ~65 ms of a core): a login's
    /// request waits for one with its connection suspended, never on a server thread.
    public let passwordChecks: WorkerPool
    /// The checks each client network (an IPv4 /24, an IPv6 /64) may have queued or running at
    /// once: no client fills the queue every login waits in.
    public let checkQuota = PasswordCheckQuota(perClient: 8)
    /// How long the splash shows before it routes (milliseconds).
    public let splashMilliseconds: Int64

    /// An environment with these parts.
    public init(
        users: [String: String], splashMilliseconds: Int64, passwordCheckThreads: Int = 1,
        throttle: LoginThrottle = LoginThrottle()
    ) {
        self.users = users
        self.splashMilliseconds = splashMilliseconds
        self.throttle = throttle
        passwordChecks = WorkerPool(
            threads: passwordCheckThreads, queueLimit: 64, name: "notes-password-checks", priority: .idle)
    }

    /// Whether `password` is `username`'s. Slow: run it on `passwordChecks`. An unknown username
    /// takes as long as a known one, so the answer's timing does not tell which names exist.
    func authenticate(username: String, password: String) -> Bool {
        guard let hash = users[username] else {
            PasswordHash.verifyDummy(password: password)
            return false
        }
        return PasswordHash.verify(password: password, against: hash)
    }
}

/// The key of what Notes' coordinators share: none outside Notes' shell.
private struct NotesEnvironmentKey: EnvironmentKey {
    static let defaultValue: NotesEnvironment? = nil
}

extension EnvironmentValues {
    /// What Notes' coordinators share (who can log in, the throttle, the password checks), given
    /// at start (`NotesApp.environmentValues`); `nil` outside Notes' shell.
    var notes: NotesEnvironment? {
        get { self[NotesEnvironmentKey.self] }
        set { self[NotesEnvironmentKey.self] = newValue }
    }
}

extension NotesApp {
    /// What every session's screens and coordinators reach through their root (`root.environment`),
    /// given once at start: the shared environment.
    public var environmentValues: EnvironmentValues {
        var values = EnvironmentValues()
        values.notes = environment
        return values
    }
}
