import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension Shell {
    /// `GET /api/events`: the session's changes as server-sent events. The current state comes at
    /// once unless the client already has it (`Last-Event-ID`, the version it saw last).
    ///
    /// A client with no session (no valid cookie) gets the state of its new session and the end
    /// of the stream: nothing is subscribed for a session that holds nothing, and a browser
    /// reconnects with the cookie the answer set. A session with `maxStreamsPerSession` streams
    /// open gets 429. The stream is subscribed only once the request's changes are committed.
    func openEvents(_ request: Request, _ shell: ShellSession, _ session: SessionContext) throws -> Response {
        let stream = EventStream()
        if session.isNew {
            stream.send(
                event: "state", id: String(shell.root.version), data: payload(shell, session).serializedString)
            stream.close()
            return .events(stream)
        }
        guard events.hasRoom(shell.channel) else {
            throw HTTPError(
                .tooManyRequests,
                "this session has \(events.maxStreamsPerSession) event streams open already; close a tab or try later")
        }
        let seen = (request.headers["Last-Event-ID"] ?? request.query("lastEventId")).flatMap { Int($0) }
        if seen.map({ $0 < shell.root.version }) ?? true {
            stream.send(
                event: "state", id: String(shell.root.version), data: payload(shell, session).serializedString)
        }
        shell.pendingStreams.append(stream)
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
