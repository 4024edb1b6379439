import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// A stream a request opened, subscribed once the request's changes are committed.
struct OpenedStream: Sendable {
    let stream: EventStream
    /// The version of the state the stream has: sent when it opened, or the one it resumed at.
    var version: Int?
    /// When the stream must first get its place in the ledger the instances sharing the store
    /// keep (`ShellEvents.sharesStreams`): the request's deferred answer, and the one it gets
    /// when there is no place.
    var admission: (answer: PendingResponse, refusal: Response)?
}

/// The event-stream endpoint, `GET /api/events`, and the `state` events a live app's open pages get.
extension Shell {
    /// `GET /api/events`: the session's changes as server-sent events. Each `state` event's id is
    /// `<channel>.<version>` (`eventID`): the version, and the line of versions it belongs to. The
    /// current state comes at once unless the client resumes (`Last-Event-ID`) with exactly the id
    /// of the current state: a client that is behind, or that presents an id this session's app
    /// never sent (an older session's, after a restart that lost it, an expiry or a replaced
    /// session), gets the current state, which the page applies whatever its version.
    ///
    /// A client with no session (no valid cookie) gets the state of its new session and the end
    /// of the stream: nothing is subscribed for a session that holds nothing, and a browser
    /// reconnects with the cookie the answer set. A session with `maxStreamsPerSession` streams
    /// open gets 429. The stream is subscribed only once the request's changes are committed.
    ///
    /// A retired id's stream would hear nothing: it ends at once, and the browser reconnects with
    /// the id it has by then. A page opened during the splash passes on the URL it was opened at
    /// (a same-site `next`), which the app remembers unless the request must change nothing.
    func openEvents(_ context: ShellRequestContext) throws -> Response {
        let (request, app, session) = (context.request, context.app, context.session)
        switch context.access {
        case .retired:
            let ended = EventStream()
            ended.close()
            return .events(ended)
        case .full:
            if let target = context.next { application.rememberTarget(target, in: app) }
        case .readOnly:
            break
        }
        let stream = EventStream()
        if session.isNew {
            stream.send(event: "state", id: eventID(app), data: payload(app, session).serializedString)
            stream.close()
            return .events(stream)
        }
        guard events.hasRoom(app.channel) else { throw Self.tooManyStreams(events.maxStreamsPerSession) }
        let current = eventID(app)
        if (request.headers["Last-Event-ID"] ?? request.query("lastEventId")) != current {
            stream.send(event: "state", id: current, data: payload(app, session).serializedString)
        }
        guard events.sharesStreams else {
            app.pendingStreams.append(OpenedStream(stream: stream, version: app.root.version))
            return .events(stream)
        }
        // The session's other streams may be open at other instances: the answer waits for the
        // stream's place in the ledger they share, asked for once the request is committed.
        let answer = PendingResponse()
        let refusal = Response.error(Self.tooManyStreams(events.maxStreamsPerSession), for: request)
        app.pendingStreams.append(
            OpenedStream(stream: stream, version: app.root.version, admission: (answer, refusal)))
        return .deferred(answer)
    }

    /// The refusal of a stream over a session's cap.
    static func tooManyStreams(_ cap: Int) -> HTTPError {
        HTTPError(.tooManyRequests, "this session has \(cap) event streams open already; close a tab or try later")
    }

    /// Subscribes `opened` to `app`'s channel (after its request's commit): at once, or once the
    /// ledger shared with the other instances gave it a place — refused (429) when it has none.
    func subscribe(_ opened: OpenedStream, _ app: LiveApp, _ session: SessionContext) {
        let (stream, channel) = (opened.stream, app.channel)
        // Subscribed before its place is known: no event between now and then is missed.
        events.subscribe(
            stream, to: channel, openedWith: session.id, user: session.user, version: opened.version,
            count: app.streamCount)
        guard let (answer, refusal) = opened.admission else { return }
        events.admit(stream, of: channel) { [events] admitted in
            if admitted {
                answer.fulfil(.events(stream))
            } else {
                events.unsubscribe(stream, from: channel)
                stream.close()
                answer.fulfil(refusal)
            }
        }
    }

    /// The id of the `state` event for what `app` shows now: `<channel>.<version>`. The channel
    /// is the same for every app rebuilt from the session's snapshot and differs between sessions,
    /// so a page can tell a newer state of its session from the state of another one.
    func eventID(_ app: LiveApp) -> String { app.channel + "." + String(app.root.version) }

    /// Sends the session's new state to its open pages: rendered for those open here, announced
    /// to the other instances sharing the store (their pages get it from `relayedState`).
    func publishState(_ app: LiveApp, _ session: SessionContext) {
        if events.hasListeners(app.channel) {
            events.publishHere(
                app.channel, event: "state", id: eventID(app), version: app.root.version,
                data: payload(app, session).serializedString)
        }
        if events.relays { events.announceState(app.channel, id: eventID(app)) }
    }

    /// Another instance committed the state `version` of `channel`, which a page open here (of the
    /// session `id`) does not have: the session is read again from the store and its state sent
    /// to its pages here, under the session's lock, as work with no request (on the scheduler's
    /// thread, not the relay's). Nothing when the session is no longer live here, or moved on to
    /// another channel.
    func relayedState(of channel: String, session id: SessionID, version: Int) {
        scheduler.schedule(at: clock()) { [self] in
            do {
                _ = try registry.withLiveSession(id) { session in
                    guard session.attachment is LiveApp || session.keptSnapshot != nil else { return }
                    let app = live(session)
                    guard app.channel == channel, app.root.version >= version else { return }
                    events.publishHere(
                        channel, event: "state", id: eventID(app), version: app.root.version,
                        data: payload(app, session).serializedString)
                }
            } catch {
                Logger.appshell.error("a state another instance committed could not be sent to a page here: \(error)")
            }
        }
    }
}
