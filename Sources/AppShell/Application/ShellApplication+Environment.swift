import AppShellSessions

extension ShellApplication {
    /// No values of the app's own by default: every key reads its default.
    ///
    /// An app gives its own as SwiftUI's `.environment(_:_:)` does, here once for the whole app,
    /// each under a key it declares (`EnvironmentKey`):
    ///
    /// ```swift
    /// var environmentValues: EnvironmentValues {
    ///     var values = EnvironmentValues()
    ///     values.reminderDelayMilliseconds = reminderDelayMilliseconds
    ///     return values
    /// }
    /// ```
    public var environmentValues: EnvironmentValues { EnvironmentValues() }

    /// A new session's app outside a shell (a test's): its root lends the app's values
    /// (`environmentValues`) with the system's clock.
    package func makeApp(defaults: DefaultsStore, now: Int64) -> LiveApp {
        makeApp(defaults: defaults, environment: environmentValues, now: now)
    }

    /// The session's app rebuilt from `snapshot` outside a shell (a test's): its root lends the
    /// app's values (`environmentValues`) with the system's clock.
    package func restoreApp(from snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) -> LiveApp? {
        restoreApp(from: snapshot, defaults: defaults, environment: environmentValues, now: now)
    }
}
