import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import FoundationEssentials

/// Everything `appshell` can be configured with: `config.json`, then `APPSHELL_*` environment
/// variables over it. Each key, its type, range and default is in `AppConfiguration.keys`.
public struct AppConfiguration: Sendable, Equatable {
    /// How the HTTP server listens and its limits.
    public var server = HTTPServerConfiguration()
    /// The directory whose files are served as they are (relative to the working directory).
    public var publicDirectory = "Public"
    /// `Cache-Control: max-age` for static files, in seconds.
    public var staticMaxAgeSeconds = 3600
    /// Which backend keeps session defaults.
    public var store = StoreKind.sqlite
    /// The SQLite file, when `store` is `.sqlite`.
    public var storePath = "data/appshell.sqlite"
    /// The session cookie's name (before the `__Host-` prefix).
    public var cookieName = "appshell_session"
    /// Whether the cookie is `Secure` with the `__Host-` prefix (serve over HTTPS).
    public var secureCookies = false
    /// Session timeouts and the in-memory cap.
    public var sessions = SessionConfiguration()
    /// How long the splash's start-up work takes at least, in milliseconds.
    public var splashDelayMilliseconds = 1000
    /// How long after "Remind me" the notification comes, in milliseconds.
    public var reminderDelayMilliseconds = 5000
    /// Who can log in: username → Argon2id hash (none by default; config.json ships `demo`).
    public var users: [String: String] = [:]
    /// The threads that check passwords (64 MiB and ~65 ms of a core each): as many checks run at
    /// once, off the server's threads.
    public var passwordCheckThreads = DemoEnvironment.defaultPasswordCheckThreads
    /// Logins that may wait for a password-check thread; one more gets 503 with `Retry-After`.
    public var passwordCheckQueue = DemoEnvironment.defaultPasswordCheckQueue
    /// Requests' writes that may wait for the SQLite store's writer (group commit); one more gets
    /// 503 with `Retry-After` and changes nothing.
    public var storeWriteQueue = AppConfiguration.defaultStoreWriteQueue
    /// The default of `storeWriteQueue`.
    public static let defaultStoreWriteQueue = 1024
    /// How the password-check threads share a core with the server's: `idle` by default (they
    /// run when the server leaves the core idle, so reads keep their latency while logins go on).
    public var passwordCheckPriority = DemoEnvironment.defaultPasswordCheckPriority

    /// The backends `store` can name.
    public enum StoreKind: String, Sendable {
        /// The embedded SQLite file at `storePath`: survives restarts.
        case sqlite
        /// Memory only: for tests and benchmarks; nothing survives a restart.
        case memory
    }

    /// The defaults.
    public init() {}

    /// Loads `path` (when it exists, or always when `required`) and then the environment.
    /// Unknown keys, wrong types and out-of-range values throw an error naming the key.
    public static func load(
        path: String, required: Bool, environment: [String: String]
    ) throws(ConfigurationError) -> AppConfiguration {
        var configuration = AppConfiguration()
        if let contents = FileManager.default.contents(atPath: path) {
            try configuration.apply(file: path, contents: Array(contents))
        } else if required || FileManager.default.fileExists(atPath: path) {
            throw ConfigurationError("\(path): cannot be read (missing or not permitted)")
        }
        try configuration.apply(environment: environment)
        return configuration
    }

    /// Applies the members of a JSON object read from `file`.
    mutating func apply(file: String, contents: [UInt8]) throws(ConfigurationError) {
        let document: JSON
        do {
            document = try JSON(parsing: contents)
        } catch {
            throw ConfigurationError("\(file): not valid JSON: \(error)")
        }
        guard let members = document.objectValue else {
            throw ConfigurationError("\(file): must hold a JSON object, not \(document.typeDescription)")
        }
        for name in members.keys.sorted() {
            guard let key = AppConfiguration.keys.first(where: { $0.name == name }) else {
                throw ConfigurationError("\(file): unknown key \"\(name)\"\(AppConfiguration.suggestion(for: name))")
            }
            try key.apply(members[name]!, &self, "\(file): \"\(name)\"")
        }
    }

    /// Applies every `APPSHELL_*` variable; an unknown one is an error (a misspelt key would
    /// otherwise be silently ignored). `APPSHELL_CONFIG` names the file and is skipped here.
    mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for (variable, text) in environment.sorted(by: { $0.key < $1.key }) {
            guard variable.hasPrefix("APPSHELL_"), variable != "APPSHELL_CONFIG" else { continue }
            guard let key = AppConfiguration.keys.first(where: { $0.environmentName == variable }) else {
                throw ConfigurationError("environment: unknown variable \(variable)")
            }
            let value: JSON
            switch key.kind {
            case .string, .token, .choice, .address:
                value = .string(text)
            case .hostList, .proxyList:
                value = AppConfiguration.list(fromEnvironment: text)
            case .users:
                guard let parsed = try? JSON(parsing: text) else {
                    throw ConfigurationError("environment: \(variable) must be JSON: \(key.kind.expectation)")
                }
                value = parsed
            case .integer:
                guard let number = Int(text) else {
                    throw ConfigurationError(
                        "environment: \(variable) must be \(key.kind.expectation), got \"\(text)\"")
                }
                value = .integer(number)
            case .boolean:
                switch text.lowercased() {
                case "true", "1", "yes": value = .bool(true)
                case "false", "0", "no": value = .bool(false)
                default:
                    throw ConfigurationError("environment: \(variable) must be true or false, got \"\(text)\"")
                }
            }
            try key.apply(value, &self, "environment: \(variable)")
        }
    }

    /// A list variable: a JSON array, or entries separated by commas (spaces around them ignored).
    private static func list(fromEnvironment text: String) -> JSON {
        if text.hasPrefix("["), let parsed = try? JSON(parsing: text) { return parsed }
        let entries = text.split(separator: ",").map(trimmingSpaces).filter { !$0.isEmpty }
        return .array(entries.map { .string($0) })
    }

    /// `text` without the spaces and tabs around it (what `trimmingCharacters(in: .whitespaces)`
    /// removes, without Foundation).
    private static func trimmingSpaces(_ text: Substring) -> String {
        let isSpace = { (character: Character) in character.isWhitespace && !character.isNewline }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }

    /// Whether the server is bound to a loopback address (reachable only from this machine).
    public var bindsLoopback: Bool {
        let host = server.host
        return host.hasPrefix("127.") || host == "::1" || host.lowercased().hasPrefix("::ffff:127.")
    }

    private static func suggestion(for name: String) -> String {
        let lowered = name.lowercased()
        guard let close = keys.first(where: { $0.name.lowercased() == lowered }) else { return "" }
        return " (did you mean \"\(close.name)\"?)"
    }
}
