import AppShell

/// Everything `notes` can be configured with: the framework's keys (`shell`: port, store, cookie,
/// limits…) and the app's own, `splashMilliseconds`, `users` and `passwordCheckThreads`. Each can
/// be set in the configuration file or overridden by its `APPSHELL_*` variable.
public struct NotesConfiguration: AppConfiguration, Equatable {
    /// The framework's part, with the app's own defaults: its store file and its cookie's name.
    public var shell: ShellConfiguration = {
        var shell = ShellConfiguration()
        shell.storePath = "data/notes.sqlite"
        shell.cookieName = "notes_session"
        return shell
    }()
    /// How long the splash shows before it routes, in milliseconds.
    public var splashMilliseconds = 800
    /// Who can log in: username → Argon2id hash.
    public var users: [String: String] = [:]
    /// The threads that check passwords.
    public var passwordCheckThreads = 1

    /// The defaults.
    public init() {}

    /// The framework's keys, then the app's.
    public static let keys: [ConfigurationKey<NotesConfiguration>] =
        ShellConfiguration.keys.map { $0.scoped(to: \NotesConfiguration.shell) } + [
            ConfigurationKey("splashMilliseconds", .integer(0...60_000), "how long the splash shows") {
                $1.splashMilliseconds = $0.integerValue!
            },
            ConfigurationKey("users", usersKind, "who can log in: usernames and Argon2id password hashes") {
                $1.users = parseUsers($0)!
            },
            ConfigurationKey("passwordCheckThreads", .integer(1...64), "threads that check passwords") {
                $1.passwordCheckThreads = $0.integerValue!
            },
        ]

    /// `users`: an array of `{"username", "passwordHash"}` with distinct usernames.
    static let usersKind = ConfigurationKind.json(
        expectation: "an array of {\"username\": non-empty string, \"passwordHash\": Argon2id hash from "
            + "`notes hash-password`} with distinct usernames",
        isValid: { parseUsers($0) != nil })

    /// Username → hash, or `nil` when an entry is malformed or repeated.
    static func parseUsers(_ value: JSON) -> [String: String]? {
        guard let entries = value.arrayValue else { return nil }
        var users: [String: String] = [:]
        for entry in entries {
            guard let username = entry["username"]?.stringValue, !username.isEmpty,
                let hash = entry["passwordHash"]?.stringValue, PasswordHash.isWellFormed(hash),
                users.updateValue(hash, forKey: username) == nil
            else { return nil }
        }
        return users
    }
}
