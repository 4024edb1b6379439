import AppShellSessions

/// How a screen reaches its session: the root controller and the defaults — never a global.
public final class ScreenContext {
    /// The session's root controller (seed 001: "the root is reachable from anywhere").
    public unowned let root: RootController

    init(root: RootController) { self.root = root }

    /// The session's defaults, for the request being handled.
    public var defaults: DefaultsStore { root.defaults }
}
