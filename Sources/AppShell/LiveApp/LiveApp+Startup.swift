import AppShellSessions

// The start-up work (`StartupWork`) of a live app: what is due, and the deep link that waits.

extension LiveApp {
    /// When the app next has work to do without a request (its start-up work's end), if ever.
    package var nextDeadline: Int64? { startup?.deadline }

    /// The deep link waiting for the start-up work, if any: the URL the splash shows at.
    public var pendingDeepLink: String? { startup?.deepLink }

    /// Runs the work that is due at `now`: the start-up work, then the app coordinator's routing.
    package func advance(now: Int64) {
        guard let startup, now >= startup.deadline else { return }
        self.startup = nil
        startup.work.work(root.defaults)
        coordinator.startupDidFinish(deepLink: startup.deepLink)
    }

    /// Shows `deepLink` (a same-site path the app knows) once the app can: during the start-up
    /// work it waits (and is kept in the snapshot, as the URL an iOS app is launched with waits
    /// for its launch to finish); after it, the app coordinator opens it.
    public func open(deepLink: String) {
        guard startup != nil else { return coordinator.open(deepLink: deepLink) }
        guard startup?.deepLink != deepLink else { return }
        startup?.deepLink = deepLink
        // Not a change the state shows (no new version), but one the snapshot must keep.
        stored = nil
    }
}
