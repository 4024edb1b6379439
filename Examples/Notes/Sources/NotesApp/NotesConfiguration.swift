import AppShell

/// Everything `notes` can be configured with: the framework's keys (`shell`: port, store, cookie,
/// limits, who can log in…) and the app's own, `splashMilliseconds`. Each can
/// be set in the configuration file or overridden by its `APPSHELL_*` variable.
public struct NotesConfiguration: AppConfiguration, Equatable {
    /// The framework's part, with the app's own defaults: its store file and its cookie's name.
    public var shell: ShellConfiguration = {
        var shell = ShellConfiguration()
        shell.storePath = "data/notes.sqlite"
        shell.cookieName = "notes_session"
        // A hundred notes of the longest text fit.
        shell.accounts.maxUserStoreBytes = 262_144
        return shell
    }()
    /// How long the splash shows before it routes, in milliseconds.
    public var splashMilliseconds = 800

    /// The defaults.
    public init() {}

    /// The framework's keys, then the app's.
    public static let keys: [ConfigurationKey<NotesConfiguration>] =
        ShellConfiguration.keys.map { $0.scoped(to: \NotesConfiguration.shell) } + [
            ConfigurationKey("splashMilliseconds", .integer(0...60_000), "how long the splash shows") {
                $1.splashMilliseconds = $0.integerValue!
            }
        ]
}
