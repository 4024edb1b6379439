import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Glibc

/// The value types a configuration key can have, with what each must be.
public enum ConfigurationKind: Sendable {
    /// A non-empty string.
    case string
    /// A cookie-name token (RFC 9110 token characters).
    case token
    /// One of the given strings.
    case choice([String])
    /// An integer in the range.
    case integer(ClosedRange<Int>)
    /// `true` or `false` (in the environment also `1`/`0`, `yes`/`no`).
    case boolean
    /// An IPv4 or IPv6 address literal (what a socket can bind).
    case address
    /// A Redis server's URL (`RedisURL`): `redis://[user:password@]host[:port][/db]` or
    /// `unix:///path[?db=N&password=…]`.
    case redisURL
    /// An array of allowed host names (`AllowedHosts`).
    case hostList
    /// An array of proxy addresses or CIDR ranges (`TrustedProxies`).
    case proxyList
    /// Any JSON value `isValid` accepts (in the environment: JSON text); `expectation` says what it
    /// must be, for error messages.
    case json(expectation: String, isValid: @Sendable (JSON) -> Bool)

    /// Whether the value is an array of strings checked one by one.
    var isList: Bool {
        switch self {
        case .hostList, .proxyList: return true
        default: return false
        }
    }

    /// What a value must be, for error messages.
    public var expectation: String {
        switch self {
        case .string: return "a non-empty string"
        case .token: return "a non-empty token of letters, digits and !#$%&'*+-.^_`|~"
        case .choice(let choices): return "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
        case .integer(let range): return "an integer from \(range.lowerBound) to \(range.upperBound)"
        case .boolean: return "true or false"
        case .address: return "an IPv4 or IPv6 address literal such as 127.0.0.1, 0.0.0.0, ::1 or :: (no brackets)"
        case .redisURL:
            return
                "a redis://[user:password@]host[:port][/db], redis-cluster://[user:password@]host:port[,host:port...] or unix:///path[?db=N&password=...] URL"
        case .hostList:
            return "an array of host names (no port), IP addresses, or .example.com / *.example.com patterns"
        case .proxyList: return "an array of IPv4 or IPv6 addresses or CIDR ranges such as 10.0.0.0/8"
        case .json(let expectation, _): return expectation
        }
    }

    /// Whether `value` is one of this kind.
    func isValid(_ value: JSON) -> Bool {
        switch (self, value) {
        case (.string, .string(let text)): return !text.isEmpty
        case (.token, .string(let text)): return SessionCookie.isValidName(text)
        case (.choice(let choices), .string(let text)): return choices.contains(text)
        case (.integer(let range), .integer(let number)): return range.contains(number)
        case (.boolean, .bool): return true
        case (.json(_, let isValid), _): return isValid(value)
        case (.address, .string(let text)): return ConfigurationKind.isAddressLiteral(text)
        case (.redisURL, .string(let text)): return (try? RedisURL(text)) != nil
        case (.hostList, .array(let entries)), (.proxyList, .array(let entries)):
            return firstInvalidEntry(entries) == nil
        default: return false
        }
    }

    /// The JSON value an environment variable's `text` stands for.
    func value(fromEnvironment text: String, _ variable: String) throws(ConfigurationError) -> JSON {
        switch self {
        case .string, .token, .choice, .address, .redisURL:
            return .string(text)
        case .hostList, .proxyList:
            return ConfigurationKind.list(fromEnvironment: text)
        case .json:
            guard let parsed = try? JSON(parsing: text) else {
                throw ConfigurationError("environment: \(variable) must be JSON: \(expectation)")
            }
            return parsed
        case .integer:
            guard let number = Int(text) else {
                throw ConfigurationError("environment: \(variable) must be \(expectation), got \"\(text)\"")
            }
            return .integer(number)
        case .boolean:
            switch text.lowercased() {
            case "true", "1", "yes": return .bool(true)
            case "false", "0", "no": return .bool(false)
            default:
                throw ConfigurationError("environment: \(variable) must be true or false, got \"\(text)\"")
            }
        }
    }

    /// The first entry of a host or proxy list that is not a valid one; `nil` when all are.
    func firstInvalidEntry(_ entries: [JSON]) -> JSON? {
        entries.first { entry in
            guard let text = entry.stringValue else { return true }
            switch self {
            case .hostList: return (try? AllowedHosts([text])) == nil
            case .proxyList: return (try? TrustedProxies([text])) == nil
            default: return true
            }
        }
    }

    /// Whether `text` is an IPv4 or IPv6 literal a socket can bind.
    static func isAddressLiteral(_ text: String) -> Bool {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        return inet_pton(AF_INET, text, &ipv4) == 1 || inet_pton(AF_INET6, text, &ipv6) == 1
    }

    /// A list variable: a JSON array, or entries separated by commas (spaces around them ignored).
    static func list(fromEnvironment text: String) -> JSON {
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
}

/// One configuration key: its name in the configuration file, its environment variable, its type
/// and range, and where its value goes in `Configuration`.
public struct ConfigurationKey<Configuration>: Sendable {
    /// The key's name in the file, e.g. `maxBodyBytes`.
    public let name: String
    /// Its type and range.
    public let kind: ConfigurationKind
    /// What it sets, in a few words (the Configuration article's table says the same).
    public let summary: String
    private let assign: @Sendable (JSON, inout Configuration) -> Void

    /// A key named `name` of `kind`; `assign` stores a value already checked against `kind`.
    public init(
        _ name: String, _ kind: ConfigurationKind, _ summary: String,
        _ assign: @escaping @Sendable (JSON, inout Configuration) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.summary = summary
        self.assign = assign
    }

    /// `APPSHELL_` and the name in upper snake case: `maxBodyBytes` → `APPSHELL_MAX_BODY_BYTES`.
    public var environmentName: String {
        var result = "APPSHELL_"
        var previous: Character?
        for character in name {
            if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { result += "_" }
            result += character.uppercased()
            previous = character
        }
        return result
    }

    /// The same key setting the part of a larger configuration that `part` reaches (the
    /// framework's keys scoped to an app configuration's `shell`).
    public func scoped<Whole>(to part: WritableKeyPath<Whole, Configuration> & Sendable) -> ConfigurationKey<Whole> {
        let assign = self.assign
        return ConfigurationKey<Whole>(name, kind, summary) { value, whole in assign(value, &whole[keyPath: part]) }
    }

    /// Checks `value` against the key's type and range and stores it; `origin` names the key in
    /// the error.
    public func apply(_ value: JSON, to configuration: inout Configuration, origin: String) throws(ConfigurationError) {
        guard kind.isValid(value) else {
            var shown: String
            switch value {
            case .string, .integer, .bool, .double: shown = value.serializedString
            default: shown = value.typeDescription
            }
            if case .array(let entries) = value, kind.isList, let entry = kind.firstInvalidEntry(entries) {
                shown = entry.stringValue == nil ? entry.typeDescription : entry.serializedString
            }
            // A URL that does not parse may hold its password anywhere: only its scheme is
            // repeated into a log, with what is wrong.
            if case .redisURL = kind, let text = value.stringValue {
                shown = JSON.string(RedisURL.redacted(text)).serializedString
                if let why = RedisURL.refusal(of: text) { shown += " (\(why))" }
            }
            throw ConfigurationError("\(origin) must be \(kind.expectation), got \(shown)")
        }
        assign(value, &configuration)
    }

    /// The strings of a list already checked by `apply`.
    public static func strings(_ value: JSON) -> [String] { value.arrayValue?.compactMap(\.stringValue) ?? [] }
}
