import AppShell

/// Everything the demo can be configured with: the framework's keys (`shell`, the accounts
/// among them) and the demo's own — the splash and reminder delays, and whether the shipped demo
/// account may be served beyond loopback. The framework's
/// values are reached as if they were the demo's (`configuration.server.port`).
@dynamicMemberLookup
public struct DemoConfiguration: AppConfiguration, Equatable {
    /// The framework's part: server, static files, store, cookie and sessions.
    public var shell = ShellConfiguration()
    /// How long the splash's start-up work takes at least, in milliseconds.
    public var splashDelayMilliseconds = 1000
    /// How long after "Remind me" the notification comes, in milliseconds.
    public var reminderDelayMilliseconds = 5000
    /// Whether the shipped demo account may be served on a `host` that is not loopback.
    public var allowDemoAccount = false
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
                "allowDemoAccount", .boolean, "serve the shipped demo account (demo / appshell) on a non-loopback host"
            ) {
                $1.allowDemoAccount = $0.boolValue!
            },
        ]

    /// The hash of the demo account's password (`appshell`) that config.json ships: anyone can log
    /// in with it.
    public static let demoPasswordHash =
        "$argon2id$v=19$m=65536,t=2,p=1$0/qOVdgtO+/T0r14ZF5SWQ$Db8VdRj7CqoQmDVTI1dQA3q6G5oRL3DarWL9lrOa1YE"

    /// Refuses the demo account on a host other clients can reach, unless `allowDemoAccount`.
    public func validate() throws(ConfigurationError) {
        guard !shell.bindsLoopback, !allowDemoAccount, shell.accounts.users.values.contains(Self.demoPasswordHash)
        else { return }
        throw ConfigurationError(
            "the demo account (password appshell, shipped in config.json) is not served on \(shell.server.host), "
                + "which is not loopback: give \"users\" (APPSHELL_USERS) your own accounts (appshell hash-password), "
                + "or set \"allowDemoAccount\" (APPSHELL_ALLOW_DEMO_ACCOUNT) to true")
    }
}
