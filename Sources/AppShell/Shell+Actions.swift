import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension Shell {
    /// `POST /api/actions`: `{"action": name, …parameters}` → the new state (with the page fragment
    /// when the page's script asks with `X-AppShell-Fragment: 1`).
    func performJSON(_ request: Request, _ shell: LiveApp, _ session: SessionContext) throws -> Response {
        try checkOrigin(request)
        guard !session.isRetired else { throw Shell.retiredSessionError }
        let body = try request.decodeJSON()
        guard var members = body.objectValue, let name = members.removeValue(forKey: "action")?.stringValue else {
            throw HTTPError.badRequest("the body must be a JSON object with an \"action\" string")
        }
        let action = try makeAction(name, members, request)
        let wantsFragment = request.headers["X-AppShell-Fragment"] == "1"
        let answer: @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response = {
            [self] error, request, shell, session in
            guard let error else {
                if wantsFragment { return .json(payload(shell, session)) }
                return .json(bytes: shell.stateBytes(defaults: session.defaults))
            }
            // A malformed action is the request's own mistake and changed nothing: the error
            // alone, as for every other 400.
            if error.status == 400 { return .error(HTTPError.badRequest(error.message), for: request) }
            // The others (401, 409, 429, 503) depend on the session's state: the answer carries it.
            var answer =
                (wantsFragment ? payload(shell, session) : shell.state(defaults: session.defaults))
                .objectValue ?? [:]
            answer["error"] = .string(error.message)
            var response = Response.json(.object(answer), status: HTTPStatus(rawValue: error.status))
            if let seconds = error.retryAfterSeconds {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
        return run(
            action, request, shell, session, ifRetired: .error(Shell.retiredSessionError, for: request), answer: answer)
    }

    /// A checked `POST /actions` form: its action and the other fields.
    struct Form: Sendable {
        let action: String
        let fields: [String: String]
    }

    /// `POST /actions`, before any app is made: a foreign origin, a body that is not a form, or a
    /// missing or wrong token is refused (403 changes nothing), and so is a form with no action.
    func checkForm(_ request: Request, _ session: SessionContext) throws -> Form {
        try checkOrigin(request)
        var fields = try request.decodeForm()
        guard tokens.isValid(fields.removeValue(forKey: "csrf"), for: session.id.bytes) else {
            throw HTTPError(
                .forbidden, "This form has expired or did not come from this site. Reload the page and try again.")
        }
        guard let name = fields.removeValue(forKey: "action") else {
            throw HTTPError.badRequest("the form has no action")
        }
        return Form(action: name, fields: fields)
    }

    /// `POST /actions`: an HTML form without JavaScript, checked by `checkForm`. The action runs
    /// and the answer is a 303 to the page to show.
    func performForm(
        _ form: Form, _ request: Request, _ shell: LiveApp, _ session: SessionContext
    ) throws
        -> Response
    {
        // Sent with an id a login or logout retired as it waited: nothing to act on. The browser
        // has the new id by now; `/` shows what it names.
        guard !session.isRetired else { return .redirect(to: "/") }
        let action = try makeAction(form.action, form.fields.mapValues { JSON.string($0) }, request)
        // A refused action still leads back to the page, which says why (e.g. the login message);
        // a malformed one (a field missing) is the form's mistake: 400, with what was wrong.
        let answer: @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response = {
            [self] error, request, shell, _ in
            if let error, error.status == 400 { return .error(HTTPError.badRequest(error.message), for: request) }
            return .redirect(to: application.url(of: shell))
        }
        return run(action, request, shell, session, ifRetired: .redirect(to: "/"), answer: answer)
    }

    /// Runs `action` and gives `answer` its outcome: at once, or — when the action handed slow
    /// work off (a password check) — once that work is done (`ifRetired` when the session's id was
    /// retired meanwhile).
    private func run(
        _ action: ScreenAction, _ request: Request, _ shell: LiveApp, _ session: SessionContext,
        ifRetired retired: Response,
        answer: @escaping @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        do {
            try apply(action, shell, session)
        } catch {
            return answer(error, request, shell, session)
        }
        guard let deferred = shell.root.deferredAction else { return answer(nil, request, shell, session) }
        shell.root.deferredAction = nil
        return finishLater(deferred, action, request, session, ifRetired: retired, answer: answer)
    }

    /// The answer to an action sent with a session id that a rotation retired moments ago.
    static let retiredSessionError = HTTPError(
        .conflict,
        "this session changed (a login or logout) while the request was on its way; nothing was done. Reload the page")

    private func makeAction(_ name: String, _ parameters: [String: JSON], _ request: Request) throws -> ScreenAction {
        guard knownActions.contains(name) else {
            let known = knownActions.sorted().joined(separator: ", ")
            throw HTTPError.badRequest("unknown action \"\(name)\"; known actions: \(known)")
        }
        return ScreenAction(name: name, parameters: parameters, clientAddress: request.clientAddress)
    }

    /// A state-changing request whose `Origin` is another site is refused (403): a page elsewhere
    /// must not act for the user. Requests without `Origin` (curl) pass. The `Host` this compares
    /// with is one the server serves (the HTTP layer's allowed hosts refused any other before
    /// this runs): comparing with `Host` alone does not stop DNS rebinding. Hosts compare
    /// case-insensitively, as browsers lowercase the origin they send.
    func checkOrigin(_ request: Request) throws {
        guard let origin = request.headers["Origin"] else { return }
        let host = (request.headers["Host"] ?? "").lowercased()
        let sent = origin.lowercased()
        guard !host.isEmpty, sent == "http://" + host || sent == "https://" + host else {
            throw HTTPError(.forbidden, "requests from \(origin) are not accepted")
        }
    }

    /// Runs `action`. The version names one state: a change that no transition accompanied — of
    /// the stored values, or of what the visible screen adds (`view`, e.g. a failed login's
    /// message), also when the action then failed — still gives a new version, and values set back
    /// to what they were (a launch on the list) are no change. After a success, a same-site `next`
    /// path is opened (login's "go where you were going").
    func apply(_ action: ScreenAction, _ shell: LiveApp, _ session: SessionContext) throws(ActionError) {
        try noteChanges(shell, session) { () throws(ActionError) in
            try dispatch(action, shell)
            // Handed off (`RootController.finishLater`): `next` is opened once it succeeded.
            guard shell.root.deferredAction == nil else { return }
            openNext(of: action, in: shell)
        }
    }

    /// After an action succeeded, its same-site `next` path is opened.
    func openNext(of action: ScreenAction, in shell: LiveApp) {
        if let next = action.string("next"), Shell.isSameSitePath(next) {
            _ = application.open(path: next, next: nil, in: shell)
        }
    }

    /// Runs `body` (an action or the rest of one), giving a new version for a change no
    /// transition accompanied (see `apply`).
    func noteChanges(
        _ shell: LiveApp, _ session: SessionContext, _ body: () throws(ActionError) -> Void
    ) throws(ActionError) {
        shell.stateCache = nil
        shell.pageCache = nil
        let version = shell.root.version
        let values = session.storedValues
        let view = shell.root.visibleScreen.state()
        defer {
            if shell.root.version == version
                && (session.storedValues != values || shell.root.visibleScreen.state() != view)
            {
                shell.root.noteChange()
            }
        }
        try body()
    }

    /// Gives `action` to the visible screen's coordinator, `launch` to the app coordinator, or
    /// `show` to the visible screen's routes (`Route`).
    func dispatch(_ action: ScreenAction, _ shell: LiveApp) throws(ActionError) {
        if action.name == ActionDescription.launch.name { return try shell.coordinator.launch(action) }
        if action.name == ActionDescription.show.name { return try shell.show(action) }
        let visible = shell.root.visibleScreen
        guard visible.actions.contains(action.name) else {
            throw ActionError(status: 409, "the \(visible.name) screen does not offer \"\(action.name)\"")
        }
        try visible.perform(action)
    }

    /// Whether `path` is a path on this site: one leading slash, no scheme, no backslash, no
    /// control characters — never a way to send the user elsewhere. Checked on the UTF-8 bytes:
    /// compared as Characters, `/` and a combining mark after it are one, so `//\u{34F}evil.example`
    /// (which a browser reads as the host `evil.example`, the mark ignored) had passed.
    public static func isSameSitePath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/"), bytes.count < 2 || bytes[1] != UInt8(ascii: "/") else { return false }
        if bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F }) { return false }
        return !bytes.indices.dropLast(2).contains { index in
            bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                && bytes[index + 2] == UInt8(ascii: "/")
        }
    }
}
