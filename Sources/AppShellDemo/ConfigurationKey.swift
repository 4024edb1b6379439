import AppShell
import AppShellAuth
import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import Glibc

/// One configuration key: its name in config.json, its environment variable, its type and range,
/// and where its value goes.
struct ConfigurationKey: Sendable {
    /// The value types a key can have.
    enum Kind: Sendable {
        case string
        case token
        case choice([String])
        case integer(ClosedRange<Int>)
        case boolean
        case users
        /// An IPv4 or IPv6 address literal (what a socket can bind).
        case address
        /// An array of allowed host names (`AllowedHosts`).
        case hostList
        /// An array of proxy addresses or CIDR ranges (`TrustedProxies`).
        case proxyList

        /// Whether the value is an array of strings checked one by one.
        var isList: Bool {
            switch self {
            case .hostList, .proxyList: return true
            default: return false
            }
        }

        /// What a value must be, for error messages.
        var expectation: String {
            switch self {
            case .string: return "a non-empty string"
            case .token: return "a non-empty token of letters, digits and !#$%&'*+-.^_`|~"
            case .choice(let choices): return "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
            case .integer(let range): return "an integer from \(range.lowerBound) to \(range.upperBound)"
            case .boolean: return "true or false"
            case .users:
                return "an array of {\"username\": non-empty string, \"passwordHash\": Argon2id hash from "
                    + "`appshell hash-password`} with distinct usernames"
            case .address: return "an IPv4 or IPv6 address literal such as 127.0.0.1, 0.0.0.0, ::1 or :: (no brackets)"
            case .hostList:
                return "an array of host names (no port), IP addresses, or .example.com / *.example.com patterns"
            case .proxyList: return "an array of IPv4 or IPv6 addresses or CIDR ranges such as 10.0.0.0/8"
            }
        }
    }

    let name: String
    let kind: Kind
    let summary: String
    private let assign: @Sendable (JSON, inout AppConfiguration) -> Void

    /// `APPSHELL_` and the name in upper snake case: `maxBodyBytes` → `APPSHELL_MAX_BODY_BYTES`.
    var environmentName: String {
        var result = "APPSHELL_"
        var previous: Character?
        for character in name {
            if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { result += "_" }
            result += character.uppercased()
            previous = character
        }
        return result
    }

    init(
        _ name: String, _ kind: Kind, _ summary: String,
        _ assign: @escaping @Sendable (JSON, inout AppConfiguration) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.summary = summary
        self.assign = assign
    }

    /// Checks `value` against the key's type and range and stores it; `origin` names the key in
    /// the error.
    func apply(_ value: JSON, _ configuration: inout AppConfiguration, _ origin: String) throws(ConfigurationError) {
        let valid: Bool
        switch (kind, value) {
        case (.string, .string(let text)): valid = !text.isEmpty
        case (.token, .string(let text)): valid = SessionCookie.isValidName(text)
        case (.choice(let choices), .string(let text)): valid = choices.contains(text)
        case (.integer(let range), .integer(let number)): valid = range.contains(number)
        case (.boolean, .bool): valid = true
        case (.users, .array(let entries)): valid = ConfigurationKey.parseUsers(entries) != nil
        case (.address, .string(let text)): valid = ConfigurationKey.isAddressLiteral(text)
        case (.hostList, .array(let entries)), (.proxyList, .array(let entries)):
            valid = ConfigurationKey.firstInvalidEntry(entries, kind) == nil
        default: valid = false
        }
        guard valid else {
            var shown: String
            switch value {
            case .string, .integer, .bool, .double: shown = value.serializedString
            default: shown = value.typeDescription
            }
            if case .array(let entries) = value, kind.isList,
                let entry = ConfigurationKey.firstInvalidEntry(entries, kind)
            {
                shown = entry.stringValue == nil ? entry.typeDescription : entry.serializedString
            }
            throw ConfigurationError("\(origin) must be \(kind.expectation), got \(shown)")
        }
        assign(value, &configuration)
    }
}

extension ConfigurationKey {
    /// Whether `text` is an IPv4 or IPv6 literal a socket can bind.
    static func isAddressLiteral(_ text: String) -> Bool {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        return inet_pton(AF_INET, text, &ipv4) == 1 || inet_pton(AF_INET6, text, &ipv6) == 1
    }

    /// The first entry of a host or proxy list that is not a valid one; `nil` when all are.
    static func firstInvalidEntry(_ entries: [JSON], _ kind: Kind) -> JSON? {
        entries.first { entry in
            guard let text = entry.stringValue else { return true }
            switch kind {
            case .hostList: return (try? AllowedHosts([text])) == nil
            case .proxyList: return (try? TrustedProxies([text])) == nil
            default: return true
            }
        }
    }

    /// The strings of a list already checked by `apply`.
    static func strings(_ value: JSON) -> [String] { value.arrayValue?.compactMap(\.stringValue) ?? [] }

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

extension AppConfiguration {
    /// Every key `appshell` accepts, in the order the README lists them.
    static let keys: [ConfigurationKey] = [
        ConfigurationKey("host", .address, "address to bind (IPv4 or IPv6 literal)") {
            $1.server.host = $0.stringValue!
        },
        ConfigurationKey("port", .integer(0...65535), "TCP port; 0 picks a free one") {
            $1.server.port = $0.integerValue!
        },
        ConfigurationKey("threads", .integer(1...1024), "worker threads (default: the number of cores)") {
            $1.server.threads = $0.integerValue!
        },
        ConfigurationKey("publicDirectory", .string, "directory of static files") {
            $1.publicDirectory = $0.stringValue!
        },
        ConfigurationKey("staticMaxAgeSeconds", .integer(0...31_536_000), "Cache-Control max-age of static files") {
            $1.staticMaxAgeSeconds = $0.integerValue!
        },
        ConfigurationKey("maxBodyBytes", .integer(0...1_073_741_824), "largest request body; 413 beyond") {
            $1.server.maxBodyBytes = $0.integerValue!
        },
        ConfigurationKey(
            "connectionMemoryBytes", .integer(4096...16_777_216),
            "per-connection memory; request line and headers must fit"
        ) { $1.server.connectionMemoryBytes = $0.integerValue! },
        ConfigurationKey("maxConnections", .integer(1...1_000_000), "open connections at most") {
            $1.server.maxConnections = $0.integerValue!
        },
        ConfigurationKey("maxConnectionsPerIP", .integer(0...1_000_000), "open connections per client IP; 0: no limit")
        {
            $1.server.maxConnectionsPerIP = $0.integerValue!
        },
        ConfigurationKey("idleTimeoutSeconds", .integer(1...86_400), "idle connection timeout") {
            $1.server.idleTimeoutSeconds = $0.integerValue!
        },
        ConfigurationKey("shutdownTimeoutSeconds", .integer(0...3600), "grace period for in-flight requests on SIGTERM")
        {
            $1.server.shutdownTimeoutSeconds = $0.integerValue!
        },
        ConfigurationKey("accessLog", .boolean, "one JSON line per request on stdout") {
            $1.server.accessLog = $0.boolValue!
        },
        ConfigurationKey("store", .choice(["sqlite", "memory"]), "where session defaults live") {
            $1.store = $0.stringValue == "memory" ? .memory : .sqlite
        },
        ConfigurationKey("storePath", .string, "the SQLite file (its folder is created)") {
            $1.storePath = $0.stringValue!
        },
        ConfigurationKey("cookieName", .token, "session cookie name") { $1.cookieName = $0.stringValue! },
        ConfigurationKey("secureCookies", .boolean, "__Host- prefix and Secure attribute (HTTPS only)") {
            $1.secureCookies = $0.boolValue!
        },
        ConfigurationKey("sessionIdleTimeoutSeconds", .integer(1...31_536_000), "idle session timeout") {
            $1.sessions.idleTimeoutSeconds = Int64($0.integerValue!)
        },
        ConfigurationKey("sessionAbsoluteTimeoutSeconds", .integer(1...31_536_000), "absolute session timeout") {
            $1.sessions.absoluteTimeoutSeconds = Int64($0.integerValue!)
        },
        ConfigurationKey("maxSessionsInMemory", .integer(1...100_000_000), "sessions held in memory at most") {
            $1.sessions.maxSessionsInMemory = $0.integerValue!
        },
        ConfigurationKey("splashDelayMilliseconds", .integer(0...60_000), "how long the splash's start-up work takes") {
            $1.splashDelayMilliseconds = $0.integerValue!
        },
        ConfigurationKey("reminderDelayMilliseconds", .integer(0...3_600_000), "how long \"Remind me\" waits") {
            $1.reminderDelayMilliseconds = $0.integerValue!
        },
        ConfigurationKey("users", .users, "who can log in: usernames and Argon2id password hashes") {
            $1.users = ConfigurationKey.parseUsers($0.arrayValue!)!
        },
        ConfigurationKey("sessionSweepIntervalSeconds", .integer(1...86_400), "how often expired sessions are removed")
        {
            $1.sessions.sweepIntervalSeconds = $0.integerValue!
        },
        ConfigurationKey(
            "maxEventStreams", .integer(1...1_000_000), "open event streams at most (within 3/4 of maxConnections)"
        ) { $1.server.maxEventStreams = $0.integerValue! },
        ConfigurationKey(
            "maxEventStreamsPerIP", .integer(0...1_000_000),
            "open event streams per client IP (within 3/4 of maxConnectionsPerIP); 0: no limit of its own"
        ) { $1.server.maxEventStreamsPerIP = $0.integerValue! },
        ConfigurationKey(
            "eventStreamBacklogBytes", .integer(1024...1_073_741_824),
            "bytes an event stream may hold for a client that does not read; beyond, the stream is ended"
        ) { $1.server.eventStreamBacklogBytes = $0.integerValue! },
        ConfigurationKey("allowedHosts", .hostList, "host names served besides loopback names and IP addresses") {
            $1.server.allowedHosts = (try? AllowedHosts(ConfigurationKey.strings($0))) ?? .loopback
        },
        ConfigurationKey("trustedProxies", .proxyList, "proxies whose X-Forwarded-For gives the client address") {
            $1.server.trustedProxies = (try? TrustedProxies(ConfigurationKey.strings($0))) ?? .none
        },
        ConfigurationKey("passwordCheckThreads", .integer(1...256), "threads that check passwords") {
            $1.passwordCheckThreads = $0.integerValue!
        },
        ConfigurationKey("passwordCheckQueue", .integer(1...65_536), "logins waiting for a password check at most") {
            $1.passwordCheckQueue = $0.integerValue!
        },
        ConfigurationKey(
            "storeWriteQueue", .integer(1...1_000_000), "writes waiting for the SQLite store's writer at most"
        ) { $1.storeWriteQueue = $0.integerValue! },
        ConfigurationKey(
            "passwordCheckPriority", .choice(ThreadPriority.allCases.map(\.rawValue)),
            "how password checks share a core with the server's threads"
        ) { $1.passwordCheckPriority = ThreadPriority(rawValue: $0.stringValue!) ?? .idle },
    ]
}
