import AppShell
import AppShellAuth
import AppShellConcurrency
import AppShellJSON

/// Everything the demo can be configured with: the framework's keys (`shell`) and the demo's own —
/// the splash and reminder delays, the users, and the password-check threads and their priority. The framework's
/// values are reached as if they were the demo's (`configuration.server.port`).
@dynamicMemberLookup
public struct DemoConfiguration: AppConfiguration, Equatable {
    /// The framework's part: server, static files, store, cookie and sessions.
    public var shell = ShellConfiguration()
    /// How long the splash's start-up work takes at least, in milliseconds.
    public var splashDelayMilliseconds = 1000
    /// How long after "Remind me" the notification comes, in milliseconds.
    public var reminderDelayMilliseconds = 5000
    /// Who can log in: username → Argon2id hash (none by default; config.json ships `demo`).
    public var users: [String: String] = [:]
    /// The threads that check passwords (64 MiB and ~65 ms of a core each): as many checks run at
    /// once, off the server's threads.
    public var passwordCheckThreads = DemoEnvironment.defaultPasswordCheckThreads
    /// Logins that may wait for a password-check thread; one more gets 503 with `Retry-After`.
    public var passwordCheckQueue = DemoEnvironment.defaultPasswordCheckQueue
    /// How the password-check threads share a core with the server's: `idle` by default (they
    /// run when the server leaves the core idle, so reads keep their latency while logins go on).
    public var passwordCheckPriority = DemoEnvironment.defaultPasswordCheckPriority

    /// The defaults.
    public init() {}

    /// A value of the framework's part, e.g. `configuration.server` or `configuration.store`.
    public subscript<Value>(dynamicMember path: WritableKeyPath<ShellConfiguration, Value>) -> Value {
        get { shell[keyPath: path] }
        set { shell[keyPath: path] = newValue }
    }

    /// Every key `appshell` accepts: the framework's, then the demo's.
    public static let keys: [ConfigurationKey<DemoConfiguration>] =
        ShellConfiguration.keys.map { $0.scoped(to: \DemoConfiguration.shell) } + [
            ConfigurationKey(
                "splashDelayMilliseconds", .integer(0...60_000), "how long the splash's start-up work takes"
            ) {
                $1.splashDelayMilliseconds = $0.integerValue!
            },
            ConfigurationKey("reminderDelayMilliseconds", .integer(0...3_600_000), "how long \"Remind me\" waits") {
                $1.reminderDelayMilliseconds = $0.integerValue!
            },
            ConfigurationKey(
                "users", DemoConfiguration.usersKind, "who can log in: usernames and Argon2id password hashes"
            ) {
                $1.users = DemoConfiguration.parseUsers($0.arrayValue!)!
            },
            ConfigurationKey("passwordCheckThreads", .integer(1...256), "threads that check passwords") {
                $1.passwordCheckThreads = $0.integerValue!
            },
            ConfigurationKey("passwordCheckQueue", .integer(1...65_536), "logins waiting for a password check at most")
            {
                $1.passwordCheckQueue = $0.integerValue!
            },
            ConfigurationKey(
                "passwordCheckPriority", .choice(ThreadPriority.allCases.map(\.rawValue)),
                "how password checks share a core with the server's threads"
            ) { $1.passwordCheckPriority = ThreadPriority(rawValue: $0.stringValue!) ?? .idle },
        ]

    /// The `users` key's type: an array of username and Argon2id hash pairs.
    static let usersKind = ConfigurationKind.json(
        expectation: "an array of {\"username\": non-empty string, \"passwordHash\": Argon2id hash from "
            + "`appshell hash-password`} with distinct usernames",
        isValid: { value in value.arrayValue.flatMap(parseUsers) != nil })

    /// Username → hash from the `users` array; `nil` when an entry is malformed or repeated.
    static func parseUsers(_ entries: [JSON]) -> [String: String]? {
        var users: [String: String] = [:]
        for entry in entries {
            guard let members = entry.objectValue, members.count == 2,
                let username = members["username"]?.stringValue, !username.isEmpty,
                let hash = members["passwordHash"]?.stringValue, PasswordHash.isWellFormed(hash),
                users.updateValue(hash, forKey: username) == nil
            else { return nil }
        }
        return users
    }
}
