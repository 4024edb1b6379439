import AppShellAuth
import AppShellHTTP
import AppShellSessions
import FoundationEssentials

/// `appshell users add|passwd|remove|list`: the accounts of the configured store (the SQLite file
/// or the Redis server that serving uses, from the same configuration file and environment), for
/// the operator and for scripts. Every app's binary has it (`ShellCommand.run`).
///
/// A password is one line of standard input, typed without echo on a terminal (where it is asked
/// for on standard error). `passwd` and `remove` end the user's sessions in the store: a
/// password set by the operator logs the user out everywhere.
enum UsersCommand {
    /// What the command can do, for the usage text.
    static let summary = "add|passwd|remove NAME, list: the accounts of the configured store"

    /// Exit status of a refusal: an unknown user, a name taken, an invalid name or password.
    static let refusedStatus: Int32 = 1

    /// Runs `users` with the arguments after it; returns the exit status.
    static func run<Configuration: AppConfiguration>(
        _ configurationType: Configuration.Type, arguments: [String], environment: [String: String],
        executable: String
    ) -> Int32 {
        let usage = """
            usage: \(executable) users add NAME [--config PATH]      adds an account; its password on standard input
                   \(executable) users passwd NAME [--config PATH]   sets its password; its sessions end
                   \(executable) users remove NAME [--config PATH]   removes it, its user's store and its sessions
                   \(executable) users list [--config PATH]          prints every account's name, one a line
            """
        var configPath = environment["APPSHELL_CONFIG"] ?? "config.json"
        var explicitPath = environment["APPSHELL_CONFIG"] != nil
        var words: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--config" {
                guard let path = remaining.popFirst() else { return usageError("--config needs a path", usage) }
                configPath = path
                explicitPath = true
            } else if argument == "--help" || argument == "-h" {
                print(usage)
                return 0
            } else if argument.hasPrefix("--") {
                return usageError("unknown argument \(argument)", usage)
            } else {
                words.append(argument)
            }
        }
        guard let action = words.first, ["add", "passwd", "remove", "list"].contains(action) else {
            return usageError(
                words.first.map { "unknown users command \($0)" } ?? "a command is needed: add, passwd, remove or list",
                usage)
        }
        guard words.count == (action == "list" ? 1 : 2) else {
            return usageError(action == "list" ? "list takes no name" : "\(action) needs one user name", usage)
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(path: configPath, required: explicitPath, environment: environment)
        } catch {
            Logger.appshell.error("configuration error: \(error)")
            return ShellCommand.configurationErrorStatus
        }
        LoggingSystem.logLevel = configuration.shell.logLevel
        let backend: any DefaultsBackend
        do {
            backend = try openStore(configuration.shell)
        } catch {
            Logger.appshell.error("users: \(error)")
            return 1
        }
        defer { backend.close() }
        // A server serving the SQLite file would keep the sessions it holds in memory, and could
        // write one back: ending sessions waits until it stops.
        var alone: SQLiteServingLock?
        if ["passwd", "remove"].contains(action), configuration.shell.store == .sqlite {
            do {
                alone = try SQLiteServingLock.alone(configuration.shell.storePath)
            } catch {
                Logger.appshell.error("users: \(error)")
                return 1
            }
            guard alone != nil else {
                return refused(
                    "\(action): a server is serving \(configuration.shell.storePath); stop it first (its sessions "
                        + "in memory would outlive this), or end the user's sessions from the account screen")
            }
        }
        defer { withExtendedLifetime(alone) {} }
        do {
            if action == "list" {
                for name in try backend.accountNames() { print(name) }
                return 0
            }
            let name = try AccountName(words[1]).text
            switch action {
            case "add": return try add(name, to: backend)
            case "passwd": return try setPassword(of: name, in: backend)
            default: return try remove(name, from: backend)
            }
        } catch let error as CredentialError {
            Logger.appshell.error("users \(action): \(error)")
            return refusedStatus
        } catch {
            Logger.appshell.error("users \(action): \(error)")
            return 1
        }
    }

    private static func add(_ name: String, to backend: any DefaultsBackend) throws -> Int32 {
        guard try backend.account(named: name) == nil else { return refused("add: the user \(name) exists already") }
        let hash = try PasswordHash.make(password: try readNewPassword())
        let created = Int64(Date().timeIntervalSince1970)
        // Checked again by the insert itself: another `add` may have taken the name meanwhile.
        guard try backend.insertAccount(Account(name: name, passwordHash: hash, created: created)) else {
            return refused("add: the user \(name) exists already")
        }
        print("added \(name)")
        return 0
    }

    private static func setPassword(of name: String, in backend: any DefaultsBackend) throws -> Int32 {
        guard try backend.account(named: name) != nil else { return refused("passwd: no user \(name)") }
        let hash = try PasswordHash.make(password: try readNewPassword())
        guard try backend.setPasswordHash(hash, ofAccount: name) else { return refused("passwd: no user \(name)") }
        let ended = try backend.removeSessions(of: name, except: nil)
        print("password of \(name) set; \(ended.count) session\(ended.count == 1 ? "" : "s") ended")
        return 0
    }

    private static func remove(_ name: String, from backend: any DefaultsBackend) throws -> Int32 {
        guard let removed = try backend.removeAccount(named: name) else { return refused("remove: no user \(name)") }
        let count = removed.sessions.count
        print("removed \(name), its store and \(count) session\(count == 1 ? "" : "s")")
        return 0
    }

    /// One line of standard input, checked against `PasswordRule`.
    private static func readNewPassword() throws -> String {
        let terminal = PasswordPrompt.isTerminal
        if terminal { PasswordPrompt.write("Password: ") }
        let password = PasswordPrompt.readLine(echo: !terminal)
        if terminal { PasswordPrompt.write("\n") }
        guard let password else { throw CredentialError("no password on standard input") }
        try PasswordRule.check(password)
        return password
    }

    /// The configured store, as serving opens it: the accounts live there.
    private static func openStore(_ configuration: ShellConfiguration) throws -> any DefaultsBackend {
        switch configuration.store {
        case .memory:
            throw StoreError("the configured store is memory, which keeps no accounts beyond a process")
        case .sqlite:
            return try SQLiteDefaultsBackend(path: configuration.storePath)
        case .redis:
            return try RedisDefaultsBackend(url: RedisURL(configuration.storeURL))
        }
    }

    private static func refused(_ message: String) -> Int32 {
        Logger.appshell.error("users \(message)")
        return refusedStatus
    }

    private static func usageError(_ message: String, _ usage: String) -> Int32 {
        Logger.appshell.error("users: \(message)\n\(usage)")
        return ShellCommand.configurationErrorStatus
    }
}
