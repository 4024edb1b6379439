import AppShellAuth
import AppShellHTTP
import FoundationEssentials

/// An app's command line: parses the arguments, loads the app's configuration (a file, then
/// `APPSHELL_*` variables), builds the app's `ShellServer` and serves until SIGTERM or SIGINT. An
/// app's `main` is one call:
///
/// ```swift
/// exit(ShellCommand.run(NotesConfiguration.self) { configuration in
///     try ShellServer(configuration: configuration.shell, application: NotesApp(), pagePaths: NotesApp.pagePaths,
///                     chrome: PageChrome(name: "Notes", stylesheets: ["app.css"]))
/// })
/// ```
public enum ShellCommand {
    /// Exit status for a usage or configuration error, and for a mistake in what the app's
    /// coordinators declare (`DeclarationError`, thrown by `makeServer`).
    public static let configurationErrorStatus: Int32 = 2

    /// A command of its own besides serving (`appshell hash-password`): its name, a line for the
    /// usage text, and what it does (it returns the process's exit status).
    public struct Subcommand: Sendable {
        /// The first argument that runs it.
        public let name: String
        /// What it does, for the usage text.
        public let summary: String
        /// Runs it with the arguments after its name; returns the exit status.
        public let run: @Sendable (_ arguments: [String]) -> Int32

        /// A subcommand named `name`.
        public init(name: String, summary: String, run: @escaping @Sendable (_ arguments: [String]) -> Int32) {
            self.name = name
            self.summary = summary
            self.run = run
        }
    }

    /// The usage text of `executable` with `subcommands`.
    static func usage(_ executable: String, _ subcommands: [Subcommand]) -> String {
        let indent = String(repeating: " ", count: "usage: ".count)
        let lines = subcommands.map { command in
            let padded = command.name + String(repeating: " ", count: max(1, 19 - command.name.count))
            return "\(indent)\(executable) \(padded)\(command.summary)\n"
        }
        return """
            usage: \(executable) [--config PATH]
            \(indent)\(executable) health [--config PATH]   exit 0 when the server so configured answers GET /healthz
            \(indent)\(executable) users …            \(UsersCommand.summary)
            \(lines.joined())  --config PATH   configuration file (default: $APPSHELL_CONFIG or ./config.json)
              --help          show this help
            Every key of the file can be overridden by an APPSHELL_* environment variable (the Configuration article lists them).
            """
    }

    /// Runs the command and returns the process's exit status: blocks SIGTERM and SIGINT (so call
    /// it before any thread starts), runs a subcommand if the first argument names one, else loads
    /// `Configuration` from `--config PATH` (default `$APPSHELL_CONFIG` or `./config.json`) and
    /// the environment, sets `LoggingSystem.logLevel` to its `logLevel`, builds the server with
    /// `makeServer` and runs it. `health` instead asks
    /// the server so configured, on this machine, for `/healthz` (over TLS when it speaks HTTPS):
    /// exit 0 when it answers, 1 (and why, on standard error) when not: a container's health check.
    /// `users` manages the accounts of the configured store (`appshell users --help`).
    public static func run<Configuration: AppConfiguration>(
        _ configurationType: Configuration.Type, executable: String = "appshell", subcommands: [Subcommand] = [],
        arguments: [String] = CommandLine.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        makeServer: (Configuration) throws -> ShellServer
    ) -> Int32 {
        TerminationSignal.block()
        TerminationSignal.ignoreBrokenPipes()
        // The app's own first: one of the same name replaces the framework's.
        let subcommands = subcommands + [ShellCommand.hashPassword]
        let usage = usage(executable, subcommands)
        var configPath = environment["APPSHELL_CONFIG"] ?? "config.json"
        var explicitPath = environment["APPSHELL_CONFIG"] != nil
        var remaining = arguments.dropFirst()
        if let first = remaining.first, let command = subcommands.first(where: { $0.name == first }) {
            return command.run(Array(remaining.dropFirst()))
        }
        if remaining.first == "users" {
            return UsersCommand.run(
                Configuration.self, arguments: Array(remaining.dropFirst()), environment: environment,
                executable: executable)
        }
        let probesHealth = remaining.first == "health"
        if probesHealth { remaining = remaining.dropFirst() }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--config":
                guard let path = remaining.popFirst() else {
                    Logger.appshell.error("--config needs a path\n\(usage)")
                    return configurationErrorStatus
                }
                configPath = path
                explicitPath = true
            case "--help", "-h":
                print(usage)
                return 0
            default:
                Logger.appshell.error("unknown argument \(argument)\n\(usage)")
                return configurationErrorStatus
            }
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(path: configPath, required: explicitPath, environment: environment)
        } catch {
            Logger.appshell.error("configuration error: \(error)")
            return configurationErrorStatus
        }
        LoggingSystem.logLevel = configuration.shell.logLevel
        if probesHealth {
            let shell = configuration.shell
            let (healthy, reason) = HealthProbe.check(port: shell.server.port, tls: shell.servesHTTPS)
            if !healthy { Logger.appshell.error("unhealthy: \(reason)") }
            return healthy ? 0 : 1
        }
        let server: ShellServer
        do {
            server = try makeServer(configuration)
        } catch let error as DeclarationError {
            // The app's code, not the store: as a bad configuration, one line and exit 2.
            Logger.appshell.error("declaration error: \(error)")
            return configurationErrorStatus
        } catch {
            Logger.appshell.error("cannot start: \(error)")
            return 1
        }
        return server.run()
    }

    /// `hash-password`, every app's: one line of standard input (typed without echo on a
    /// terminal) becomes an Argon2id hash, for the `users` key of the configuration.
    public static let hashPassword = Subcommand(
        name: "hash-password", summary: "reads a password on standard input, prints its hash"
    ) { _ in
        let terminal = PasswordPrompt.isTerminal
        if terminal { PasswordPrompt.write("Password: ") }
        let password = PasswordPrompt.readLine(echo: !terminal)
        if terminal { PasswordPrompt.write("\n") }
        guard let password, !password.isEmpty else {
            Logger.appshell.error("hash-password: no password on standard input")
            return configurationErrorStatus
        }
        do {
            print(try PasswordHash.make(password: password))
            return 0
        } catch {
            Logger.appshell.error("hash-password: \(error)")
            return 1
        }
    }
}
