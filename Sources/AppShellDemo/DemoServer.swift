import AppShell

/// The demo application on the framework's `ShellServer`: its environment (the splash's and the
/// reminder's delays), its shell, its chrome and installable shell.
public final class DemoServer: Sendable {
    /// The configuration the app was built from.
    public let configuration: DemoConfiguration
    /// What the demo's coordinators share (the splash's and the reminder's delays).
    public let environment: DemoEnvironment
    /// The server: store, sessions, routes, graceful shutdown.
    public let server: ShellServer

    /// What every page shows around the screen: the demo's name and stylesheet (and the shell's page
    /// script, which every chrome loads).
    public static let chrome = PageChrome(name: "AppShell", stylesheets: ["app.css"])

    /// Opens the store and builds the app. Throws when the app's declarations are wrong
    /// (`DeclarationError`) or the store cannot be opened (`StoreError`: a corrupt or unreadable
    /// SQLite file is never replaced). `verifyPassword` checks a password against its
    /// stored hash (tests pass one that takes as long as they say); `clock` is the shell's, in
    /// milliseconds since 1970 (tests move it by hand).
    public init(
        configuration: DemoConfiguration,
        verifyPassword: @escaping @Sendable (String, String) -> Bool = {
            PasswordHash.verify(password: $0, against: $1)
        },
        clock: @escaping @Sendable () -> Int64 = Shell.systemClock
    ) throws {
        self.configuration = configuration
        // Before the first check: the server's threads must not wait for a check's memory map.
        PasswordHash.reserveHeapHeadroom()
        let environment = DemoEnvironment(
            splashDelayMilliseconds: Int64(configuration.splashDelayMilliseconds),
            reminderDelayMilliseconds: Int64(configuration.reminderDelayMilliseconds))
        self.environment = environment
        let directory = configuration.publicDirectory
        let assets = AssetVersions(directory: directory, names: DemoWebApp.shellFiles)
        server = try ShellServer(
            configuration: configuration.shell, application: DemoApp(environment: environment),
            chrome: DemoServer.chrome, assets: assets,
            webApp: DemoWebApp.make(directory: directory, assets: assets),
            accounts: Accounts(configuration: configuration.accounts, verifyPassword: verifyPassword), clock: clock)
    }

    /// The responder for every request: the routes first, static files for any other path.
    /// Throws when the public directory does not exist.
    public func makeResponder() throws(HTTPServerError) -> Router { try server.makeResponder() }
}
