import AppShell
import AppShellSessions

/// The demo as an AppShell application: its screens, coordinators and actions.
public struct DemoShell: ShellApplication {
    /// What the coordinators share.
    public let environment: DemoEnvironment

    /// The demo over `environment`.
    public init(environment: DemoEnvironment) { self.environment = environment }

    /// Every action of the demo's screens, and `launch`.
    public var knownActions: Set<String> {
        ["login", "logout", "showList", "pop", "presentSecond", "dismiss", "launch"]
    }

    /// A new session at the splash.
    public func makeSession(defaults: DefaultsStore, now: Int64) -> ShellSession {
        let coordinator = AppCoordinator(environment: environment, defaults: defaults, now: now)
        coordinator.start()
        return ShellSession(root: coordinator.root, coordinator: coordinator)
    }

    /// The session as its snapshot left it.
    public func restoreSession(from snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) -> ShellSession? {
        guard
            let coordinator = AppCoordinator(environment: environment, snapshot: snapshot, defaults: defaults, now: now)
        else { return nil }
        return ShellSession(root: coordinator.root, coordinator: coordinator)
    }
}
