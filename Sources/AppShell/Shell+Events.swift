import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension Shell {
    /// `GET /api/events`: the session's changes as server-sent events. The current state comes at
    /// once unless the client already has it (`Last-Event-ID`, the version it saw last).
    func openEvents(_ request: Request, _ shell: ShellSession, _ session: SessionContext) -> Response {
        let stream = EventStream()
        events.subscribe(stream, to: shell.channel)
        let seen = (request.headers["Last-Event-ID"] ?? request.query("lastEventId")).flatMap { Int($0) }
        if seen.map({ $0 < shell.root.version }) ?? true {
            stream.send(
                event: "state", id: String(shell.root.version), data: payload(shell, session).serializedString)
        }
        return .events(stream)
    }

    /// Sends the session's new state to its open pages.
    func publishState(_ shell: ShellSession, _ session: SessionContext) {
        guard events.hasListeners(shell.channel) else { return }
        events.publish(
            shell.channel, event: "state", id: String(shell.root.version),
            data: payload(shell, session).serializedString)
    }
}
