import AppShell
import Glibc

/// What the demo's coordinators share across sessions: the users, the login rate limiter, the
/// splash delay and the start-up work.
public final class DemoEnvironment: Sendable {
    /// Username → Argon2id password hash, from config.json.
    public let users: [String: String]
    /// Failed logins per session, client, username and (username, client) pair.
    public let throttle: LoginThrottle
    /// The threads that check passwords (each Argon2id check holds 64 MiB and about 65 ms of a
    /// core), with a bounded queue: a login waits there with its request suspended, never on a
    /// server thread, and one that finds the queue full is refused at once.
    public let passwordChecks: WorkerPool
    /// The checks each client network may have in `passwordChecks` at once.
    public let checkQuota: PasswordCheckQuota
    /// How long the splash's start-up work takes at least (milliseconds).
    public let splashDelayMilliseconds: Int64
    /// How long after `remind` the notification comes (milliseconds).
    public let reminderDelayMilliseconds: Int64
    /// The real start-up work, run when the splash finishes (before routing).
    public let startupWork: @Sendable (DefaultsStore) -> Void
    /// Whether a password matches a stored hash (`PasswordHash.verify`; tests pass a slower one).
    public let verifyPassword: @Sendable (_ password: String, _ hash: String) -> Bool

    /// An environment with the given parts.
    public init(
        users: [String: String], splashDelayMilliseconds: Int64, reminderDelayMilliseconds: Int64 = 5000,
        throttle: LoginThrottle = LoginThrottle(),
        passwordChecks: WorkerPool = WorkerPool(
            threads: DemoEnvironment.defaultPasswordCheckThreads, queueLimit: DemoEnvironment.defaultPasswordCheckQueue,
            name: "appshell-password-checks", priority: DemoEnvironment.defaultPasswordCheckPriority,
            share: DemoEnvironment.defaultPasswordCheckShare),
        checkQuota: PasswordCheckQuota = PasswordCheckQuota(perClient: DemoEnvironment.defaultPasswordChecksPerClient),
        startupWork: @escaping @Sendable (DefaultsStore) -> Void = { _ in },
        verifyPassword: @escaping @Sendable (String, String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        }
    ) {
        self.verifyPassword = verifyPassword
        self.users = users
        self.splashDelayMilliseconds = splashDelayMilliseconds
        self.reminderDelayMilliseconds = reminderDelayMilliseconds
        self.throttle = throttle
        self.passwordChecks = passwordChecks
        self.checkQuota = checkQuota
        self.startupWork = startupWork
    }

    /// Whether `password` is `username`'s (slow: run it on `passwordChecks`). An unknown username
    /// costs the same time as a known one, so the answer's timing does not tell which usernames
    /// exist.
    func authenticate(username: String, password: String) -> Bool {
        guard let hash = users[username] else {
            PasswordHash.verifyDummy(password: password)
            return false
        }
        return verifyPassword(password, hash)
    }

    /// The number of online processors (at least 1).
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Password-check threads by default: half the cores, at least 1 (the rest keep serving).
    public static var defaultPasswordCheckThreads: Int { max(1, processorCount / 2) }

    /// Logins that may wait for a password-check thread by default.
    public static let defaultPasswordCheckQueue = 64
    /// Password checks one client network may have queued or running at once by default: the
    /// queue takes eight networks to fill.
    public static let defaultPasswordChecksPerClient = 8

    /// How password checks are scheduled by default: a bounded share of a busy core, in slices of
    /// about a millisecond, so that logins get through while the reads beside them keep their
    /// latency (README, Performance: (f) at each priority).
    public static let defaultPasswordCheckPriority = ThreadPriority.share

    /// The share of a busy core and the slice of the password checks by default.
    public static let defaultPasswordCheckShare = CoreShare(percent: 20, sliceMicroseconds: 1000)
}

// MARK: The demo's environment values

/// The key of what the demo's coordinators share.
private struct DemoEnvironmentKey: EnvironmentKey {
    static let defaultValue: DemoEnvironment? = nil
}

/// The key of the reminder's delay: the configuration's default.
private struct ReminderDelayKey: EnvironmentKey {
    static let defaultValue = Int64(DemoConfiguration().reminderDelayMilliseconds)
}

extension EnvironmentValues {
    /// What the demo's coordinators share (users, login throttle, password checks); `nil`
    /// outside the demo's shell.
    var demo: DemoEnvironment? {
        get { self[DemoEnvironmentKey.self] }
        set { self[DemoEnvironmentKey.self] = newValue }
    }

    /// How long after "Remind me" the notification comes, in milliseconds.
    var reminderDelayMilliseconds: Int64 {
        get { self[ReminderDelayKey.self] }
        set { self[ReminderDelayKey.self] = newValue }
    }
}

extension DemoShell {
    /// What every session's screens and coordinators reach through their root, given once at
    /// start: the shared environment and the reminder's delay.
    public var environmentValues: EnvironmentValues {
        var values = EnvironmentValues()
        values.demo = environment
        values.reminderDelayMilliseconds = environment.reminderDelayMilliseconds
        return values
    }
}
