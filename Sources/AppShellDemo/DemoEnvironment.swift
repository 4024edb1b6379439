import AppShell

/// What the demo's coordinators share across sessions: the splash delay, the reminder's delay
/// and the start-up work. Who can log in and how logins are checked are the framework's
/// (`ShellServer.accounts`).
public final class DemoEnvironment: Sendable {
    /// How long the splash's start-up work takes at least (milliseconds).
    public let splashDelayMilliseconds: Int64
    /// How long after `remind` the notification comes (milliseconds).
    public let reminderDelayMilliseconds: Int64
    /// The real start-up work, run when the splash finishes (before routing).
    public let startupWork: @Sendable (DefaultsStore) -> Void

    /// An environment with the given parts.
    public init(
        splashDelayMilliseconds: Int64, reminderDelayMilliseconds: Int64 = 5000,
        startupWork: @escaping @Sendable (DefaultsStore) -> Void = { _ in }
    ) {
        self.splashDelayMilliseconds = splashDelayMilliseconds
        self.reminderDelayMilliseconds = reminderDelayMilliseconds
        self.startupWork = startupWork
    }
}

// MARK: The demo's environment values

/// The key of what the demo's coordinators share.
private struct DemoEnvironmentKey: EnvironmentKey {
    static let defaultValue: DemoEnvironment? = nil
}

/// The key of the reminder's delay: the configuration's default.
private struct ReminderDelayKey: EnvironmentKey {
    static let defaultValue = Int64(DemoConfiguration().reminderDelayMilliseconds)
}

extension EnvironmentValues {
    /// What the demo's coordinators share (the splash's and the reminder's delays); `nil`
    /// outside the demo's shell.
    var demo: DemoEnvironment? {
        get { self[DemoEnvironmentKey.self] }
        set { self[DemoEnvironmentKey.self] = newValue }
    }

    /// How long after "Remind me" the notification comes, in milliseconds.
    var reminderDelayMilliseconds: Int64 {
        get { self[ReminderDelayKey.self] }
        set { self[ReminderDelayKey.self] = newValue }
    }
}

extension DemoApp {
    /// What every session's screens and coordinators reach through their root, given once at
    /// start: the shared environment and the reminder's delay.
    public var environmentValues: EnvironmentValues {
        var values = EnvironmentValues()
        values.demo = environment
        values.reminderDelayMilliseconds = environment.reminderDelayMilliseconds
        return values
    }
}
