import AppShellSessions

/// A screen's property kept with the screen across a restart, as SwiftUI's `@SceneStorage` keeps
/// a scene's: `@SceneStorage("id") var noteID = 0` — the note a detail screen shows, where a login
/// screen leads next.
///
/// The value lives with the screen (in the session's snapshot, by the screen's place), so a
/// restart, or another instance sharing the store, makes the screen again with it. Any write —
/// in an action, a launch, a deep link, anywhere — is stored with the request; nothing else is
/// needed. Reading gives the value written last, or the declaration's default.
@propertyWrapper
public struct SceneStorage<Value: StorableValue> {
    /// The name the value is kept under, unique within its screen.
    public let key: String
    @usableFromInline let defaultValue: Value

    /// The value kept under `key`, `wrappedValue` when there is none.
    public init(wrappedValue: Value, _ key: String) {
        self.key = key
        defaultValue = wrappedValue
    }

    /// An optional value kept under `key`, `nil` when there is none.
    public init<Wrapped>(_ key: String) where Value == Wrapped? {
        self.init(wrappedValue: nil, key)
    }

    /// Not used: the value lives with the screen (`subscript(_enclosingInstance:…)`).
    @available(*, unavailable, message: "@SceneStorage is for the properties of a screen (a ViewController)")
    public var wrappedValue: Value {
        get { fatalError("@SceneStorage is for the properties of a screen") }
        set { fatalError("@SceneStorage is for the properties of a screen") }
    }

    /// The value `screen` keeps under the key.
    ///
    /// Inlinable, as `AppStorage`'s: specialized in the app's module, the key paths are read as
    /// plain stored properties.
    @inlinable
    public static subscript<Owner: ViewController>(
        _enclosingInstance screen: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value {
        get {
            let storage = screen[keyPath: storageKeyPath]
            guard let stored = screen.sceneValues[storage.key] else { return storage.defaultValue }
            return Value(storedValue: stored) ?? storage.defaultValue
        }
        set {
            screen.setSceneValue(newValue.storedValue, forKey: screen[keyPath: storageKeyPath].key)
        }
    }
}
