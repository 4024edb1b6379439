import AppShell

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
    /// Whether the shipped demo account may be served on a `host` that is not loopback.
    public var allowDemoAccount = false
    /// The threads that check passwords (64 MiB and ~65 ms of a core each): as many checks run at
    /// once, off the server's threads.
    public var passwordCheckThreads = DemoEnvironment.defaultPasswordCheckThreads
    /// Logins that may wait for a password-check thread; one more gets 503 with `Retry-After`.
    public var passwordCheckQueue = DemoEnvironment.defaultPasswordCheckQueue
    /// Password checks one client network (an IPv4 /24, an IPv6 /64) may have queued or running at
    /// once; one more gets 429 with `Retry-After` (see `PasswordCheckQuota`).
    public var passwordChecksPerClient = DemoEnvironment.defaultPasswordChecksPerClient
    /// Login attempts one client network (an IPv4 /24, an IPv6 /64) may make a minute, whatever
    /// their outcome; one more gets 429 with `Retry-After` (0: no limit).
    public var loginAttemptsPerNetwork = LoginThrottle.Policy().attemptsPerNetwork

    /// The login throttle's policy: its defaults, with `loginAttemptsPerNetwork`.
    var throttlePolicy: LoginThrottle.Policy {
        var policy = LoginThrottle.Policy()
        policy.attemptsPerNetwork = loginAttemptsPerNetwork
        return policy
    }
    /// How the password-check threads share a core with the server's: `share` by default (a
    /// bounded share of a busy core in short slices, so logins get through while reads keep their
    /// latency).
    public var passwordCheckPriority = DemoEnvironment.defaultPasswordCheckPriority
    /// At `share`: the percent of a core a busy server thread keeps that each check thread gets.
    public var passwordCheckShare = DemoEnvironment.defaultPasswordCheckShare.percent
    /// At `share`: how long a check keeps a core from a waiting server thread at most, in
    /// microseconds (0: until the kernel's tick, 4 ms at 250 Hz).
    public var passwordCheckSliceMicroseconds = DemoEnvironment.defaultPasswordCheckShare.sliceMicroseconds

    /// The share and slice of the password-check threads at `share`.
    public var passwordCheckCoreShare: CoreShare {
        CoreShare(percent: passwordCheckShare, sliceMicroseconds: passwordCheckSliceMicroseconds)
    }

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
            ConfigurationKey(
                "allowDemoAccount", .boolean, "serve the shipped demo account (demo / appshell) on a non-loopback host"
            ) {
                $1.allowDemoAccount = $0.boolValue!
            },
            ConfigurationKey("passwordCheckThreads", .integer(1...256), "threads that check passwords") {
                $1.passwordCheckThreads = $0.integerValue!
            },
            ConfigurationKey("passwordCheckQueue", .integer(1...65_536), "logins waiting for a password check at most")
            {
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
            ConfigurationKey(
                "passwordCheckPriority", .choice(ThreadPriority.allCases.map(\.rawValue)),
                "how password checks share a core with the server's threads"
            ) { $1.passwordCheckPriority = ThreadPriority(rawValue: $0.stringValue!) ?? .share },
            ConfigurationKey(
                "passwordCheckShare", .integer(CoreShare.percents),
                "percent of a busy core each password check gets (passwordCheckPriority \"share\")"
            ) { $1.passwordCheckShare = $0.integerValue! },
            ConfigurationKey(
                "passwordCheckSliceMicroseconds", DemoConfiguration.sliceKind,
                "how long a password check keeps a busy core at most (passwordCheckPriority \"share\")"
            ) { $1.passwordCheckSliceMicroseconds = $0.integerValue! },
        ]

    /// The hash of the demo account's password (`appshell`) that config.json ships: anyone can log
    /// in with it.
    public static let demoPasswordHash =
        "$argon2id$v=19$m=65536,t=2,p=1$0/qOVdgtO+/T0r14ZF5SWQ$Db8VdRj7CqoQmDVTI1dQA3q6G5oRL3DarWL9lrOa1YE"

    /// Refuses the demo account on a host other clients can reach, unless `allowDemoAccount`.
    public func validate() throws(ConfigurationError) {
        guard !shell.bindsLoopback, !allowDemoAccount, users.values.contains(Self.demoPasswordHash) else { return }
        throw ConfigurationError(
            "the demo account (password appshell, shipped in config.json) is not served on \(shell.server.host), "
                + "which is not loopback: give \"users\" (APPSHELL_USERS) your own accounts (appshell hash-password), "
                + "or set \"allowDemoAccount\" (APPSHELL_ALLOW_DEMO_ACCOUNT) to true")
    }

    /// The `passwordCheckSliceMicroseconds` key's type: 0, or 100 µs to 100 ms.
    static let sliceKind = ConfigurationKind.json(
        expectation: "0 (the kernel's tick) or an integer from \(CoreShare.sliceMicrosecondsRange.lowerBound) "
            + "to \(CoreShare.sliceMicrosecondsRange.upperBound)",
        isValid: { value in
            value.integerValue.map { $0 == 0 || CoreShare.sliceMicrosecondsRange.contains($0) } ?? false
        })

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
