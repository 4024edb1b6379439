import FoundationEssentials

/// One session's defaults, with the `UserDefaults` API: typed getters that never fail, setters,
/// `removeObject(forKey:)`, `register(defaults:)` and `dictionaryRepresentation()`.
///
/// A store is handed to a handler for the length of one request, under the session's lock; the
/// registry writes the changes to the backend before the response is sent, so a value set here
/// is durable once the client has the answer.
public final class DefaultsStore {
    /// The values set in this session (what the backend stores).
    package private(set) var storedValues: [String: DefaultsValue]
    /// Whether anything was set or removed since the store was handed out.
    package private(set) var hasChanges = false
    private let registration: RegistrationDomain

    init(values: [String: DefaultsValue], registration: RegistrationDomain) {
        self.storedValues = values
        self.registration = registration
    }

    /// A standalone store over `values`, with its own registration domain (for tests and tools).
    public convenience init(values: [String: DefaultsValue] = [:]) {
        self.init(values: values, registration: RegistrationDomain())
    }

    /// A store that reads as this one does now (values and registered fallbacks) and whose
    /// changes go nowhere: for work whose result is shown and thrown away (a preview).
    package func detachedCopy() -> DefaultsStore {
        DefaultsStore(values: storedValues, registration: registration)
    }

    // MARK: Reading

    /// The value for `key`: the stored one, else the registered fallback, else `nil`.
    public func value(forKey key: String) -> DefaultsValue? {
        storedValues[key] ?? registration.value(forKey: key)
    }

    /// The value as a Foundation object (`Bool`, `Int`, `Double`, `String`, `Data`, `[Any]`,
    /// `[String: Any]`), as `UserDefaults.object(forKey:)` returns it.
    public func object(forKey key: String) -> Any? { value(forKey: key)?.foundationObject }

    /// `true` for a stored `true`, a non-zero number, or the strings "true", "yes" and "1" in any
    /// case; `false` otherwise, including when the key is missing.
    public func bool(forKey key: String) -> Bool {
        switch value(forKey: key) {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .double(let value): return value != 0
        case .string(let text): return ["true", "yes", "1"].contains(text.lowercased()) || (Int(text) ?? 0) != 0
        default: return false
        }
    }

    /// The integer for `key`: numbers converted (fractions truncated), Booleans as 1 or 0,
    /// numeric strings parsed; 0 otherwise.
    public func integer(forKey key: String) -> Int {
        switch value(forKey: key) {
        case .integer(let value): return value
        case .double(let value): return value.isFinite ? Int(exactly: value.rounded(.towardZero)) ?? 0 : 0
        case .bool(let value): return value ? 1 : 0
        case .string(let text): return Int(text) ?? Double(text).flatMap { Int(exactly: $0.rounded(.towardZero)) } ?? 0
        default: return 0
        }
    }

    /// The number for `key`: integers and Booleans converted, numeric strings parsed; 0 otherwise.
    public func double(forKey key: String) -> Double {
        switch value(forKey: key) {
        case .double(let value): return value
        case .integer(let value): return Double(value)
        case .bool(let value): return value ? 1 : 0
        case .string(let text): return Double(text) ?? 0
        default: return 0
        }
    }

    /// The string for `key`; numbers are given as their text (as `UserDefaults` does), other
    /// kinds as `nil`.
    public func string(forKey key: String) -> String? {
        switch value(forKey: key) {
        case .string(let text): return text
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return value ? "1" : "0"
        default: return nil
        }
    }

    /// The bytes for `key` when it holds data.
    public func data(forKey key: String) -> Data? {
        if case .data(let bytes) = value(forKey: key) { return Data(bytes) }
        return nil
    }

    /// The array for `key` when it holds one.
    public func array(forKey key: String) -> [Any]? {
        if case .array(let values) = value(forKey: key) { return values.map(\.foundationObject) }
        return nil
    }

    /// The dictionary for `key` when it holds one.
    public func dictionary(forKey key: String) -> [String: Any]? {
        if case .dictionary(let values) = value(forKey: key) { return values.mapValues(\.foundationObject) }
        return nil
    }

    /// Registered fallbacks overlaid with the stored values, as Foundation objects.
    public func dictionaryRepresentation() -> [String: Any] {
        registration.values.merging(storedValues) { _, stored in stored }.mapValues(\.foundationObject)
    }

    // MARK: Writing

    /// Stores `value` for `key`.
    public func set(_ value: DefaultsValue, forKey key: String) {
        guard storedValues[key] != value else { return }
        storedValues[key] = value
        hasChanges = true
    }

    /// Stores a Boolean.
    public func set(_ value: Bool, forKey key: String) { set(.bool(value), forKey: key) }
    /// Stores an integer.
    public func set(_ value: Int, forKey key: String) { set(.integer(value), forKey: key) }
    /// Stores a number.
    public func set(_ value: Double, forKey key: String) { set(.double(value), forKey: key) }
    /// Stores a string.
    public func set(_ value: String, forKey key: String) { set(.string(value), forKey: key) }
    /// Stores bytes.
    public func set(_ value: Data, forKey key: String) { set(.data(Array(value)), forKey: key) }

    /// Stores a property-list value (`Bool`, `Int`, `Double`, `String`, `Data`, arrays and
    /// string-keyed dictionaries of these), or removes the key for `nil`. Returns `false`, and
    /// stores nothing, for any other type — where `UserDefaults` would raise an exception.
    @discardableResult
    public func set(_ value: Any?, forKey key: String) -> Bool {
        guard let value else {
            removeObject(forKey: key)
            return true
        }
        guard let converted = DefaultsValue(foundationObject: value) else { return false }
        set(converted, forKey: key)
        return true
    }

    /// Removes the stored value for `key` (a registered fallback then shows through).
    public func removeObject(forKey key: String) {
        guard storedValues.removeValue(forKey: key) != nil else { return }
        hasChanges = true
    }

    /// Adds fallbacks for keys that have no stored value. Like `UserDefaults`, the registration
    /// domain is shared by every session of the registry and is never stored.
    public func register(defaults: [String: Any]) {
        registration.register(defaults.compactMapValues { DefaultsValue(foundationObject: $0) })
    }
}
