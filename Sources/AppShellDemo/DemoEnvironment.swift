import AppShellAuth
import AppShellSessions
import Glibc

/// What the demo's coordinators share across sessions: the users, the login rate limiter, the
/// splash delay and the start-up work.
public final class DemoEnvironment: Sendable {
    /// Username → Argon2id password hash, from config.json.
    public let users: [String: String]
    /// Failed logins per session, client, username and (username, client) pair.
    public let throttle: LoginThrottle
    /// The bound on password checks running at once.
    public let passwordChecks: PasswordCheckSlots
    /// How long the splash's start-up work takes at least (milliseconds).
    public let splashDelayMilliseconds: Int64
    /// How long after `remind` the notification comes (milliseconds).
    public let reminderDelayMilliseconds: Int64
    /// The real start-up work, run when the splash finishes (before routing).
    public let startupWork: @Sendable (DefaultsStore) -> Void

    /// An environment with the given parts.
    public init(
        users: [String: String], splashDelayMilliseconds: Int64, reminderDelayMilliseconds: Int64 = 5000,
        throttle: LoginThrottle = LoginThrottle(),
        passwordChecks: PasswordCheckSlots = PasswordCheckSlots(count: DemoEnvironment.processorCount),
        startupWork: @escaping @Sendable (DefaultsStore) -> Void = { _ in }
    ) {
        self.users = users
        self.splashDelayMilliseconds = splashDelayMilliseconds
        self.reminderDelayMilliseconds = reminderDelayMilliseconds
        self.throttle = throttle
        self.passwordChecks = passwordChecks
        self.startupWork = startupWork
    }

    /// Whether `password` is `username`'s, checked in one of the `passwordChecks` slots; `nil`
    /// when no slot freed in time. An unknown username costs the same time as a known one, so
    /// the answer's timing does not tell which usernames exist.
    func authenticate(username: String, password: String) -> Bool? {
        passwordChecks.withSlot {
            guard let hash = users[username] else {
                PasswordHash.verifyDummy(password: password)
                return false
            }
            return PasswordHash.verify(password: password, against: hash)
        }
    }

    /// The number of online processors (at least 1): the default number of password checks at once.
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
