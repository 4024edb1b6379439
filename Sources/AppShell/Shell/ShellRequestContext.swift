import AppShellAuth
import AppShellHTTP
import AppShellSessions

/// What a shell route's handler is given, as a Hummingbird handler is given its request context:
/// the request, the client's session, the session's live app, and the shell's verdicts on the
/// client — what the handler may do (`access`), the same-site `next` it may open — made once, by
/// the checks of `RequestChecks`, rather than by hand in each handler.
///
/// The shell makes it under the session's lock, once the live app is found, restored or made
/// (`Shell.respond`); it lives for the handler's call. A verdict is made when a handler asks for
/// it. The state read, the hot path, is given the live app alone (`Shell.stateHandler`): making a
/// context copies the request, which callgrind counted at +1.5 % of a logged-in read.
///
/// A handler that changes the session takes a narrower context that can only be made when the
/// checks pass — `ActionRequestContext` (Origin, a current session id) and `FormSubmission`
/// (Origin, the form's token) — as a Hummingbird child context is made from its parent.
public struct ShellRequestContext {
    /// The request.
    public let request: Request
    /// The client's session: its id, values and the commit's hooks.
    package let session: SessionContext
    /// The session's live app, bound to the session for this request.
    public let app: LiveApp

    /// A context for `request` on `session`'s live app `app`.
    init(request: Request, session: SessionContext, app: LiveApp) {
        self.request = request
        self.session = session
        self.app = app
    }

    /// What a handler may do with the session for this request.
    public enum Access: Equatable, Sendable {
        /// Act, navigate and open streams: the changes are committed.
        case full
        /// Show what the URL would show and change nothing: a HEAD or a prefetch (see
        /// `isSafeOnly`); pages render a throwaway copy of the app.
        case readOnly
        /// Nothing: the session id was retired by a rotation (a login or logout) while the request
        /// waited; the app is a new visitor's and nothing of it is kept.
        case retired
    }

    /// What the handler may do (a retired id first: it may do nothing at all).
    public var access: Access {
        if session.isRetired { return .retired }
        return isSafeOnly ? .readOnly : .full
    }

    /// Whether the request must change nothing (RFC 9110 §9.2.1): a HEAD or a prefetch.
    public var isSafeOnly: Bool { RequestChecks.isSafeOnly(request) }

    /// The request's `next` query item when it is a path on this site (see
    /// `Shell.isSameSitePath`), else `nil`: the only `next` a handler ever opens.
    public var next: String? {
        guard let next = request.query("next"), RequestChecks.isSameSitePath(next) else { return nil }
        return next
    }
}

/// A request that may change the session through the JSON API: made only when it comes from
/// this site (`Origin`, 403 otherwise) and its session id is current (409 for one a rotation
/// retired, with nothing done).
struct ActionRequestContext {
    /// The checked request's context.
    let base: ShellRequestContext

    /// The answer to an action sent with a session id that a rotation retired moments ago.
    static let retiredSessionError = HTTPError(
        .conflict,
        "this session changed (a login or logout) while the request was on its way; nothing was done. Reload the page")

    /// `context`, checked: throws the refusal (403, 409) when it may not act.
    init(checking context: ShellRequestContext) throws {
        try RequestChecks.checkOrigin(context.request)
        guard context.access != .retired else { throw ActionRequestContext.retiredSessionError }
        base = context
    }
}

/// A `POST /actions` form that passed the checks made before any app is made: it comes from this
/// site (`Origin`) and carries the session's token (`csrf`) — else 403, which changes nothing —
/// and it names an action (else 400).
struct FormSubmission: Sendable {
    /// The form's action.
    let action: String
    /// The other fields (neither the token nor the action).
    let fields: [String: String]

    /// The form of `request`, checked for `session` with `tokens`.
    init(checking request: Request, session: SessionContext, tokens: CSRFTokens) throws {
        try RequestChecks.checkOrigin(request)
        var fields = try request.decodeForm()
        guard tokens.isValid(fields.removeValue(forKey: "csrf"), for: session.id.bytes) else {
            throw HTTPError(
                .forbidden, "This form has expired or did not come from this site. Reload the page and try again.")
        }
        guard let name = fields.removeValue(forKey: "action") else {
            throw HTTPError.badRequest("the form has no action")
        }
        action = name
        self.fields = fields
    }
}
