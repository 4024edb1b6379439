/// A key of `EnvironmentValues`, as SwiftUI's: a type with the value read when the environment
/// holds none.
///
/// An app declares one per value it gives its screens and coordinators, and a property of
/// `EnvironmentValues` that reads and writes it:
///
/// ```swift
/// private struct ReminderDelayKey: EnvironmentKey {
///     static let defaultValue: Int64 = 5000
/// }
///
/// extension EnvironmentValues {
///     /// How long after "Remind me" the notification comes, in milliseconds.
///     var reminderDelayMilliseconds: Int64 {
///         get { self[ReminderDelayKey.self] }
///         set { self[ReminderDelayKey.self] = newValue }
///     }
/// }
/// ```
///
/// A service with no sensible default (a store, a client) is an optional, `nil` by default.
/// Values are shared by every session and every thread of the server: they are `Sendable`.
public protocol EnvironmentKey {
    /// The type of the value.
    associatedtype Value: Sendable
    /// The value read when the environment holds none: outside a session, or when the app gave
    /// none at start.
    static var defaultValue: Value { get }
}

/// What a screen and a coordinator reach of their app beyond their session, typed, as SwiftUI's
/// environment: the framework's values (the shell's clock, `now`) and the app's own (its
/// services, its settings), each under an `EnvironmentKey`.
///
/// The app gives its values once, at start (`ShellApplication.environmentValues`); the shell adds
/// its own (`clock`) and lends the result to every session's root (`RootController.environment`).
/// A screen reads one with `@Environment(\.now) var now`, or through its context
/// (`context?.environment.now`); a coordinator through its root (`root.environment.now`).
public struct EnvironmentValues: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// An environment holding nothing: every key reads its default.
    public init() {}

    /// The value under `key`, its `defaultValue` when the environment holds none.
    public subscript<Key: EnvironmentKey>(key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)].flatMap { $0 as? Key.Value } ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

// MARK: The framework's values

/// The clock's key: the system's by default.
private struct ClockKey: EnvironmentKey {
    static let defaultValue: @Sendable () -> Int64 = Shell.systemClock
}

extension EnvironmentValues {
    /// The time in milliseconds since 1970: the shell's clock (`Shell.clock`, the one it was made
    /// with, so a test's fake clock is what a screen reads), the system's outside a session. The
    /// shell sets it: a value an app gives at start is replaced.
    public var clock: @Sendable () -> Int64 {
        get { self[ClockKey.self] }
        set { self[ClockKey.self] = newValue }
    }

    /// Now, in milliseconds since 1970, by `clock`: `@Environment(\.now) var now`.
    public var now: Int64 { clock() }
}
