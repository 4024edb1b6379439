import AppShellAuth
import AppShellHTTP
import AppShellJSON

/// The `appshell` command line: parses arguments, loads the configuration, serves until SIGTERM
/// or SIGINT, and shuts down gracefully.
public enum AppShellCommand {
    /// Exit status for a usage or configuration error.
    public static let configurationErrorStatus: Int32 = 2

    static let usage = """
        usage: appshell [--config PATH]
               appshell hash-password      reads a password on standard input, prints its hash
          --config PATH   configuration file (default: $APPSHELL_CONFIG or ./config.json)
          --help          show this help
        Every key of the file can be overridden by an APPSHELL_* environment variable (see README).
        """

    /// Runs the command and returns the process's exit status. Call `TerminationSignal.block()`
    /// before anything else in `main`.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        var configPath = environment["APPSHELL_CONFIG"] ?? "config.json"
        var explicitPath = environment["APPSHELL_CONFIG"] != nil
        var remaining = arguments.dropFirst()
        if remaining.first == "hash-password" { return hashPassword() }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--config":
                guard let path = remaining.popFirst() else {
                    AccessLog.error("--config needs a path\n\(usage)")
                    return configurationErrorStatus
                }
                configPath = path
                explicitPath = true
            case "--help", "-h":
                print(usage)
                return 0
            default:
                AccessLog.error("unknown argument \(argument)\n\(usage)")
                return configurationErrorStatus
            }
        }
        let configuration: AppConfiguration
        do {
            configuration = try AppConfiguration.load(
                path: configPath, required: explicitPath, environment: environment)
        } catch {
            AccessLog.error("configuration error: \(error)")
            return configurationErrorStatus
        }
        return serve(configuration)
    }

    /// `appshell hash-password`: one line of standard input (typed without echo on a terminal)
    /// becomes an Argon2id hash for the `users` key of config.json.
    private static func hashPassword() -> Int32 {
        let terminal = PasswordPrompt.isTerminal
        if terminal { PasswordPrompt.write("Password: ") }
        let password = PasswordPrompt.readLine(echo: !terminal)
        if terminal { PasswordPrompt.write("\n") }
        guard let password, !password.isEmpty else {
            AccessLog.error("hash-password: no password on standard input")
            return configurationErrorStatus
        }
        do {
            print(try PasswordHash.make(password: password))
            return 0
        } catch {
            AccessLog.error("hash-password: \(error)")
            return 1
        }
    }

    private static func serve(_ configuration: AppConfiguration) -> Int32 {
        let app: DemoApp
        let server: HTTPServer
        do {
            app = try DemoApp(configuration: configuration)
            server = HTTPServer(
                configuration: configuration.server, responder: try app.makeResponder(), statistics: app.statistics)
            try server.start()
        } catch {
            AccessLog.error("cannot start: \(error)")
            return 1
        }
        if !configuration.bindsLoopback && configuration.server.allowedHosts.entries.isEmpty {
            AccessLog.error(
                "warning: \"allowedHosts\" is empty: only requests for localhost, 127.0.0.1, [::1] or an IP address "
                    + "are served (others get 421); list the names clients use")
        }
        app.sessions.startSweeper()
        app.shell.startScheduler()
        app.shell.startEndingStreamsOfEndedSessions(
            everyMilliseconds: Int64(configuration.sessions.sweepIntervalSeconds) * 1000)
        let host =
            configuration.server.host.contains(":") ? "[\(configuration.server.host)]" : configuration.server.host
        AccessLog.event(
            "listening",
            [
                "url": .string("http://\(host):\(server.port)"), "port": .integer(server.port),
                "threads": .integer(configuration.server.threads), "store": .string(configuration.store.rawValue),
            ])
        let signal = TerminationSignal.wait()
        AccessLog.event("stopping", ["signal": .integer(Int(signal))])
        let finished = server.shutdown()
        // Logins still queued were answered 503 by the shutdown: their checks are skipped.
        app.environment.passwordChecks.stop()
        // The writes of every answered request are committed; the writer commits what is left.
        app.sessions.stopWriter()
        app.shell.stopScheduler()
        app.sessions.stopSweeper()
        // Closed here rather than left to the process's exit: the last close checkpoints the
        // write-ahead log into the file and removes it (references still held elsewhere, by a
        // stream or a connection the daemon dropped, would otherwise keep it open to the end).
        app.sessions.backend.close()
        AccessLog.event("stopped", ["inFlightFinished": .bool(finished)])
        return 0
    }
}
