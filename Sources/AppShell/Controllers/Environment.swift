/// A screen's property that reads a value of its app's environment (`EnvironmentValues`), as
/// SwiftUI's `@Environment`: `@Environment(\.now) var now`, `@Environment(\.notebook) var notebook`.
///
/// Read-only. While the screen is shown in a session it reads the environment of the session's
/// root — the app's values given at start and the shell's (`ShellApplication.environmentValues`);
/// before it is shown (in its initializer, say) and outside a session, the key's default.
/// A coordinator reads the same values through its root: `root.environment.now`.
@propertyWrapper
public struct Environment<Value> {
    /// Where the value is in `EnvironmentValues`.
    public let keyPath: KeyPath<EnvironmentValues, Value>

    /// The value at `keyPath` of the screen's environment.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }

    /// Not used: the screen's value is read through its root (`subscript(_enclosingInstance:…)`).
    @available(*, unavailable, message: "@Environment is for the properties of a screen (a ViewController)")
    public var wrappedValue: Value { fatalError("@Environment is for the properties of a screen") }

    /// The value in the environment of `screen`'s root, or in an empty one (the key's default)
    /// when it is shown in none.
    ///
    /// Inlinable, as `AppStorage`'s: specialized in the app's module, the wrapper is read as a plain
    /// stored property.
    @inlinable
    public static subscript<Owner: ViewController>(
        _enclosingInstance screen: Owner,
        wrapped wrappedKeyPath: KeyPath<Owner, Value>,
        storage storageKeyPath: KeyPath<Owner, Self>
    ) -> Value {
        let keyPath = screen[keyPath: storageKeyPath].keyPath
        guard let context = screen.context else { return EnvironmentValues()[keyPath: keyPath] }
        return context.environment[keyPath: keyPath]
    }
}
