import AppShell

/// What the demo's own tests read of its server beyond the framework's public API: the
/// framework's internals, `package` to the modules of this repository. An app outside it has no
/// such door (Examples/Notes, a package of its own, tests through `AppShellTesting` alone); the
/// rest of the demo is written on the public API as such an app is.
extension DemoServer {
    /// Every session, over the configured backend.
    package var sessions: SessionRegistry { server.sessions }
    /// How the session id travels.
    package var cookie: SessionCookie { server.cookie }
    /// The server's counters, shown at `/metrics`.
    package var statistics: ServerStatistics { server.statistics }
    /// The app shell serving the demo.
    package var shell: Shell { server.shell }
}
