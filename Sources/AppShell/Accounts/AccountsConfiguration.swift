import AppShellAuth
import AppShellConcurrency
import AppShellJSON
import Glibc

/// How the framework's accounts are configured: who can log in from the start (`users`), and how
/// logins are limited and their passwords checked. Part of every app's configuration
/// (`ShellConfiguration.accounts`), each value a key of config.json and an `APPSHELL_*` variable.
public struct AccountsConfiguration: Equatable, Sendable {
    /// Who can log in: username → Argon2id hash (`appshell hash-password` makes one); none by
    /// default.
    public var users: [String: String] = [:]
    /// Whether anyone may make an account (a sign-up screen beside the login's); off by default.
    public var signUp = false
    /// Accounts one client network (an IPv4 /24, an IPv6 /64) may make an hour; one more attempt
    /// gets 429 with `Retry-After`.
    public var signUpsPerNetworkPerHour = 10
    /// The most bytes a user's store may hold (its values as stored); an action that would pass it
    /// is refused with 413 and changes nothing.
    public var maxUserStoreBytes = 65_536
    /// The threads that check passwords (64 MiB and ~65 ms of a core each): as many checks run at
    /// once, off the server's threads.
    public var passwordCheckThreads = AccountsConfiguration.defaultPasswordCheckThreads
    /// Logins that may wait for a password-check thread; one more gets 503 with `Retry-After`.
    public var passwordCheckQueue = 64
    /// Password checks one client network (an IPv4 /24, an IPv6 /64) may have queued or running at
    /// once; one more gets 429 with `Retry-After` (see `PasswordCheckQuota`): the queue takes eight
    /// networks to fill.
    public var passwordChecksPerClient = 8
    /// Login attempts one client network may make a minute, whatever their outcome; one more gets
    /// 429 with `Retry-After` (0: no limit).
    public var loginAttemptsPerNetwork = LoginThrottle.Policy().attemptsPerNetwork

    /// The defaults.
    public init() {}

    /// The login throttle's policy: its defaults, with `loginAttemptsPerNetwork`.
    package var throttlePolicy: LoginThrottle.Policy {
        var policy = LoginThrottle.Policy()
        policy.attemptsPerNetwork = loginAttemptsPerNetwork
        return policy
    }

    /// The number of online processors (at least 1).
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Password-check threads by default: half the cores, at least 1 (the rest keep serving).
    public static var defaultPasswordCheckThreads: Int { max(1, processorCount / 2) }

    /// The keys of the accounts' part, in the order the Configuration article lists them.
    static let keys: [ConfigurationKey<AccountsConfiguration>] = [
        ConfigurationKey("users", usersKind, "who can log in: usernames and Argon2id password hashes") {
            $1.users = parseUsers($0.arrayValue!)!
        },
        ConfigurationKey("signUp", .boolean, "anyone may make an account (a sign-up screen beside the login's)") {
            $1.signUp = $0.boolValue!
        },
        ConfigurationKey(
            "signUpsPerNetworkPerHour", .integer(1...1_000_000),
            "accounts one client network (IPv4 /24, IPv6 /64) may make an hour"
        ) { $1.signUpsPerNetworkPerHour = $0.integerValue! },
        ConfigurationKey(
            "maxUserStoreBytes", .integer(1024...16_777_216),
            "bytes a user's store may hold; an action past it gets 413"
        ) { $1.maxUserStoreBytes = $0.integerValue! },
        ConfigurationKey("passwordCheckThreads", .integer(1...256), "threads that check passwords") {
            $1.passwordCheckThreads = $0.integerValue!
        },
        ConfigurationKey("passwordCheckQueue", .integer(1...65_536), "logins waiting for a password check at most") {
            $1.passwordCheckQueue = $0.integerValue!
        },
        ConfigurationKey(
            "passwordChecksPerClient", .integer(1...65_536),
            "password checks one client network (IPv4 /24, IPv6 /64) may have waiting or running"
        ) { $1.passwordChecksPerClient = $0.integerValue! },
        ConfigurationKey(
            "loginAttemptsPerNetwork", .integer(0...1_000_000),
            "login attempts one client network may make a minute, whatever their outcome (0: no limit)"
        ) { $1.loginAttemptsPerNetwork = $0.integerValue! },
    ]

    /// The `users` key's type: an array of username and Argon2id hash pairs.
    static let usersKind = ConfigurationKind.json(
        expectation: "an array of {\"username\": an account name (1-64 of a-z, 0-9, '.', '_', '-'), "
            + "\"passwordHash\": Argon2id hash from `appshell hash-password`} with distinct usernames",
        isValid: { value in value.arrayValue.flatMap(parseUsers) != nil })

    /// Username → hash from the `users` array; `nil` when an entry is malformed or repeated.
    static func parseUsers(_ entries: [JSON]) -> [String: String]? {
        var users: [String: String] = [:]
        for entry in entries {
            guard let members = entry.objectValue, members.count == 2,
                let username = members["username"]?.stringValue, let name = try? AccountName(username),
                let hash = members["passwordHash"]?.stringValue, PasswordHash.isWellFormed(hash),
                users.updateValue(hash, forKey: name.text) == nil
            else { return nil }
        }
        return users
    }
}
