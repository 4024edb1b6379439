import AppShellSessions

/// A value `@AppStorage` and `@SceneStorage` keep: one of the defaults store's kinds
/// (`DefaultsValue`), as SwiftUI's wrappers keep the property-list types of `UserDefaults`.
///
/// Booleans, integers, doubles, strings, arrays of them, optionals of them and enums whose raw
/// value is one of them (declare the conformance: `enum Tab: String, StorableValue`) are storable.
public protocol StorableValue {
    /// The value `stored` stands for; `nil` when it is of another kind (the wrapper then gives
    /// its default value).
    init?(storedValue stored: DefaultsValue)
    /// What is stored; `nil` takes the key away (an optional set to `nil`).
    var storedValue: DefaultsValue? { get }
}

extension Bool: StorableValue {
    /// `.bool`.
    public init?(storedValue stored: DefaultsValue) {
        guard case .bool(let value) = stored else { return nil }
        self = value
    }
    /// `.bool`.
    public var storedValue: DefaultsValue? { .bool(self) }
}

extension Int: StorableValue {
    /// `.integer`.
    public init?(storedValue stored: DefaultsValue) {
        guard case .integer(let value) = stored else { return nil }
        self = value
    }
    /// `.integer`.
    public var storedValue: DefaultsValue? { .integer(self) }
}

extension Double: StorableValue {
    /// `.double`, or an integer as a double.
    public init?(storedValue stored: DefaultsValue) {
        switch stored {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
    /// `.double`.
    public var storedValue: DefaultsValue? { .double(self) }
}

extension String: StorableValue {
    /// `.string`.
    public init?(storedValue stored: DefaultsValue) {
        guard case .string(let value) = stored else { return nil }
        self = value
    }
    /// `.string`.
    public var storedValue: DefaultsValue? { .string(self) }
}

extension Array: StorableValue where Element: StorableValue {
    /// `.array` whose every element is an `Element`.
    public init?(storedValue stored: DefaultsValue) {
        guard case .array(let values) = stored else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for value in values {
            guard let element = Element(storedValue: value) else { return nil }
            elements.append(element)
        }
        self = elements
    }
    /// `.array` (an element that stores nothing, an optional's `nil`, is left out).
    public var storedValue: DefaultsValue? { .array(compactMap(\.storedValue)) }
}

extension Optional: StorableValue where Wrapped: StorableValue {
    /// The wrapped value `stored` stands for, or `nil`.
    public init?(storedValue stored: DefaultsValue) {
        guard let value = Wrapped(storedValue: stored) else { return nil }
        self = .some(value)
    }
    /// The wrapped value's, or `nil` (no key) for `nil`.
    public var storedValue: DefaultsValue? { self?.storedValue }
}

extension StorableValue where Self: RawRepresentable, RawValue: StorableValue {
    /// The case whose raw value `stored` holds.
    public init?(storedValue stored: DefaultsValue) {
        guard let raw = RawValue(storedValue: stored) else { return nil }
        self.init(rawValue: raw)
    }
    /// The raw value's.
    public var storedValue: DefaultsValue? { rawValue.storedValue }
}
