import AppShellSessions

/// A screen's property kept in the session's defaults under `key`, as SwiftUI's `@AppStorage`
/// keeps one in `UserDefaults`: `@AppStorage("isLogin") var isLogin = false`.
///
/// Reading gives the stored value, or the default written at the declaration when the key holds
/// nothing (or a value of another kind); writing stores it with the request, as
/// `DefaultsStore.set(_:forKey:)` does — committed before the answer, kept by a restart. Outside a
/// request (the screen not shown in a session) it reads the default and a write is dropped.
@propertyWrapper
public struct AppStorage<Value: StorableValue> {
    /// The defaults key.
    public let key: String
    @usableFromInline let defaultValue: Value

    /// The value under `key`, `wrappedValue` when there is none.
    public init(wrappedValue: Value, _ key: String) {
        self.key = key
        defaultValue = wrappedValue
    }

    /// An optional value under `key`, `nil` when there is none.
    public init<Wrapped>(_ key: String) where Value == Wrapped? {
        self.init(wrappedValue: nil, key)
    }

    /// Not used: the screen's value is read through its session (`subscript(_enclosingInstance:…)`).
    @available(*, unavailable, message: "@AppStorage is for the properties of a screen (a ViewController)")
    public var wrappedValue: Value {
        get { fatalError("@AppStorage is for the properties of a screen") }
        set { fatalError("@AppStorage is for the properties of a screen") }
    }

    /// The value in the session's defaults of `screen`.
    ///
    /// Inlinable so that the app's module specializes it for its screen and value types: there the
    /// key paths the compiler passes are literals, read as plain stored properties (through the
    /// key path, a read was 3 000 instructions — most of a small screen's `body`, callgrind).
    @inlinable
    public static subscript<Owner: ViewController>(
        _enclosingInstance screen: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value {
        get {
            let storage = screen[keyPath: storageKeyPath]
            return Value.read(storage.key, in: screen.context?.defaults) ?? storage.defaultValue
        }
        set { newValue.write(screen[keyPath: storageKeyPath].key, in: screen.context?.defaults) }
    }
}

extension StorableValue {
    /// The value under `key` in `store`; `nil` when there is no store, no value, or one of
    /// another kind.
    @inlinable
    static func read(_ key: String, in store: DefaultsStore?) -> Self? {
        store?.value(forKey: key).flatMap(Self.init(storedValue:))
    }

    /// Stores the value under `key` in `store` (`nil` removes it); nothing without a store.
    @inlinable
    func write(_ key: String, in store: DefaultsStore?) {
        guard let store else { return }
        if let stored = storedValue {
            store.set(stored, forKey: key)
        } else {
            store.removeObject(forKey: key)
        }
    }
}
