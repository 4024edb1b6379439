import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// The JSON API's action endpoint, and what every action request shares: the action made from its
/// name, run, and answered — at once, or once the work it handed off is done.
extension Shell {
    /// `POST /api/actions`: `{"action": name, …parameters}` → the new state (with the page fragment
    /// when the page's script asks with `X-AppShell-Fragment: 1`). The context was checked as it
    /// was made: the request comes from this site and its session id is current.
    func performJSON(_ context: ActionRequestContext) throws -> Response {
        let (request, app, session) = (context.base.request, context.base.app, context.base.session)
        let body = try request.decodeJSON()
        guard var members = body.objectValue, let name = members.removeValue(forKey: "action")?.stringValue else {
            throw HTTPError.badRequest("the body must be a JSON object with an \"action\" string")
        }
        let action = try makeAction(name, members, request)
        let wantsFragment = request.headers["X-AppShell-Fragment"] == "1"
        let answer: @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response = {
            [self] error, request, app, session in
            guard let error else {
                if wantsFragment { return .json(payload(app, session)) }
                return .json(bytes: app.stateBytes(defaults: session.defaults, userDefaults: session.userDefaults))
            }
            // A malformed action is the request's own mistake and changed nothing: the error
            // alone, as for every other 400.
            if error.status == 400 { return .error(HTTPError.badRequest(error.message), for: request) }
            // The others (401, 409, 429, 503) depend on the session's state: the answer carries it.
            var answer =
                (wantsFragment
                ? payload(app, session) : app.state(defaults: session.defaults, userDefaults: session.userDefaults))
                .objectValue ?? [:]
            answer["error"] = .string(error.message)
            var response = Response.json(.object(answer), status: HTTPStatus(rawValue: error.status))
            if let seconds = error.retryAfterSeconds {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
        return run(
            action, request, app, session, ifRetired: .error(ActionRequestContext.retiredSessionError, for: request),
            answer: answer)
    }

    /// Runs `action` and gives `answer` its outcome: at once, or — when the action awaits work (a
    /// password check, another service) — once that work is done (`ifRetired` when the session's
    /// id was retired meanwhile).
    func run(
        _ action: ActionRequest, _ request: Request, _ app: LiveApp, _ session: SessionContext,
        ifRetired retired: @autoclosure () -> Response,
        answer: @escaping @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        do {
            try apply(action, app, session)
        } catch {
            return answer(error, request, app, session)
        }
        guard let deferred = app.root.deferredAction else { return answer(nil, request, app, session) }
        app.root.deferredAction = nil
        // Made only here: an error answer made for every action was 5 000 of its instructions.
        return finishLater(deferred, action, request, app, session, ifRetired: retired(), answer: answer)
    }

    /// The action `name` with its parameters, or 400 when the app offers no action by that name.
    func makeAction(_ name: String, _ parameters: [String: JSON], _ request: Request) throws -> ActionRequest {
        guard knownActions.contains(name) else {
            let known = knownActions.sorted().joined(separator: ", ")
            throw HTTPError.badRequest("unknown action \"\(name)\"; known actions: \(known)")
        }
        return ActionRequest(name: name, parameters: parameters, clientAddress: request.clientAddress)
    }
}
