import AppShellSessions

/// A screen's property kept in the logged-in user's store under `key` (`RootController.userDefaults`:
/// shared by every session of the user, on every instance), as `@AppStorage` keeps one in the
/// session's defaults: `@UserStorage("theme") var theme = "light"`.
///
/// Reading gives the stored value, or the default written at the declaration when the key holds
/// nothing (or a value of another kind); writing stores it with the request — committed before the
/// answer, and shown at once to the user's other open pages. Logged out, or outside a request, it
/// reads the default and a write is dropped.
@propertyWrapper
public struct UserStorage<Value: StorableValue> {
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
    @available(*, unavailable, message: "@UserStorage is for the properties of a screen (a ViewController)")
    public var wrappedValue: Value {
        get { fatalError("@UserStorage is for the properties of a screen") }
        set { fatalError("@UserStorage is for the properties of a screen") }
    }

    /// The value in the logged-in user's store of `screen`'s session.
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
            return Value.read(storage.key, in: screen.context?.userDefaults) ?? storage.defaultValue
        }
        set { newValue.write(screen[keyPath: storageKeyPath].key, in: screen.context?.userDefaults) }
    }
}
