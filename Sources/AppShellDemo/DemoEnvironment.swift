import AppShellAuth
import AppShellSessions

/// What the demo's coordinators share across sessions: the users, the login rate limiter, the
/// splash delay and the start-up work.
public final class DemoEnvironment: Sendable {
    /// Username → Argon2id password hash, from config.json.
    public let users: [String: String]
    /// Failed logins per session and per client IP.
    public let limiter: LoginRateLimiter
    /// How long the splash's start-up work takes at least (milliseconds).
    public let splashDelayMilliseconds: Int64
    /// How long after `remind` the notification comes (milliseconds).
    public let reminderDelayMilliseconds: Int64
    /// The real start-up work, run when the splash finishes (before routing).
    public let startupWork: @Sendable (DefaultsStore) -> Void

    /// An environment with the given parts.
    public init(
        users: [String: String], splashDelayMilliseconds: Int64, reminderDelayMilliseconds: Int64 = 5000,
        limiter: LoginRateLimiter = LoginRateLimiter(),
        startupWork: @escaping @Sendable (DefaultsStore) -> Void = { _ in }
    ) {
        self.users = users
        self.splashDelayMilliseconds = splashDelayMilliseconds
        self.reminderDelayMilliseconds = reminderDelayMilliseconds
        self.limiter = limiter
        self.startupWork = startupWork
    }

    /// Whether `password` is `username`'s. An unknown username costs the same time as a known one,
    /// so the answer's timing does not tell which usernames exist.
    func authenticate(username: String, password: String) -> Bool {
        guard let hash = users[username] else {
            PasswordHash.verifyDummy(password: password)
            return false
        }
        return PasswordHash.verify(password: password, against: hash)
    }
}
