import AppShellJSON
import FoundationEssentials

/// An app's configuration: the framework's part (`shell`) and the app's own values, loaded from a
/// JSON file (`config.json`) and then `APPSHELL_*` environment variables over it.
///
/// Each key — its name in the file, its environment variable, its type, range and where its value
/// goes — is one `ConfigurationKey` of `keys`: an app lists the framework's keys scoped to its
/// `shell` part, then its own.
///
/// ```swift
/// struct NotesConfiguration: AppConfiguration {
///     var shell = ShellConfiguration()
///     var pageSize = 20
///     static let keys = ShellConfiguration.keys.map { $0.scoped(to: \NotesConfiguration.shell) } + [
///         ConfigurationKey("pageSize", .integer(1...500), "notes per page") { $1.pageSize = $0.integerValue! }
///     ]
/// }
/// ```
public protocol AppConfiguration: Sendable {
    /// The defaults.
    init()
    /// The framework's part: server, static files, store, cookie and sessions.
    var shell: ShellConfiguration { get set }
    /// Every key the configuration accepts, in the order its documentation lists them.
    static var keys: [ConfigurationKey<Self>] { get }
    /// Checks what no single key can: values that are valid alone but not together. Called once
    /// the file and the environment are applied; the default accepts everything.
    func validate() throws(ConfigurationError)
}

extension AppConfiguration {
    /// Loads `path` (when it exists, or always when `required`) and then the environment.
    /// Unknown keys, wrong types and out-of-range values throw an error naming the key.
    public static func load(
        path: String, required: Bool, environment: [String: String]
    ) throws(ConfigurationError) -> Self {
        var configuration = Self()
        if let contents = FileManager.default.contents(atPath: path) {
            try configuration.apply(file: path, contents: Array(contents))
        } else if required || FileManager.default.fileExists(atPath: path) {
            throw ConfigurationError("\(path): cannot be read (missing or not permitted)")
        }
        try configuration.apply(environment: environment)
        try configuration.shell.checkTLSFiles()
        try configuration.validate()
        return configuration
    }

    /// Accepts every combination of valid values.
    public func validate() throws(ConfigurationError) {}

    /// Applies the members of a JSON object read from `file`.
    public mutating func apply(file: String, contents: [UInt8]) throws(ConfigurationError) {
        let document: JSON
        do {
            document = try JSON(parsing: contents)
        } catch {
            throw ConfigurationError("\(file): not valid JSON: \(error)")
        }
        guard let members = document.objectValue else {
            throw ConfigurationError("\(file): must hold a JSON object, not \(document.typeDescription)")
        }
        let keys = Self.keys
        for name in members.keys.sorted() {
            guard let key = keys.first(where: { $0.name == name }) else {
                throw ConfigurationError("\(file): unknown key \"\(name)\"\(Self.suggestion(for: name, in: keys))")
            }
            try key.apply(members[name]!, to: &self, origin: "\(file): \"\(name)\"")
        }
    }

    /// Applies every `APPSHELL_*` variable; an unknown one is an error (a misspelt key would
    /// otherwise be silently ignored). `APPSHELL_CONFIG` names the file and is skipped here.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        let keys = Self.keys
        for (variable, text) in environment.sorted(by: { $0.key < $1.key }) {
            guard variable.hasPrefix("APPSHELL_"), variable != "APPSHELL_CONFIG" else { continue }
            guard let key = keys.first(where: { $0.environmentName == variable }) else {
                throw ConfigurationError("environment: unknown variable \(variable)")
            }
            try key.apply(
                try key.kind.value(fromEnvironment: text, variable), to: &self, origin: "environment: \(variable)")
        }
    }

    private static func suggestion(for name: String, in keys: [ConfigurationKey<Self>]) -> String {
        let lowered = name.lowercased()
        guard let close = keys.first(where: { $0.name.lowercased() == lowered }) else { return "" }
        return " (did you mean \"\(close.name)\"?)"
    }
}
