import AppShell

/// Notes served: its page chrome and the framework's `ShellServer` (store, sessions, accounts,
/// `/healthz`, `/metrics`, the JSON API, pages, static files, graceful shutdown).
public final class NotesServer: Sendable {
    /// The framework's server running the app.
    public let server: ShellServer

    /// What every page shows around the screen: the app's name and its stylesheet (its colours
    /// and type, over the framework's base stylesheet, `appshell.css`, which every chrome links
    /// first). The base stylesheet and the shell's page script (`app.js`, which sends forms as
    /// JSON and follows the event stream) are the framework's: the server serves them with no
    /// copy in `Public/`.
    public static let chrome = PageChrome(
        name: "Notes", stylesheets: ["notes.css"],
        appBarHTML: "<header class=\"app-bar\"><p class=\"app-name\">Notes</p></header>")

    /// Opens the configured store and builds the app, on `clock` (milliseconds since 1970: the
    /// system's, or a test's own). Throws when the app's declarations are wrong
    /// (`DeclarationError`) or the store cannot be opened (`StoreError`).
    public init(
        configuration: NotesConfiguration, clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) throws {
        server = try ShellServer(
            configuration: configuration.shell,
            application: NotesApp(splashMilliseconds: Int64(configuration.splashMilliseconds)),
            chrome: NotesServer.chrome, clock: clock)
    }
}
