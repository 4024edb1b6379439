import AppShellHTTP
import AppShellSessions

/// The answers the shell prepares once and serves again for as long as what they show is the same:
///
/// - the state (`GET /api/state`, the hot path): `LiveApp.stateResponse`, kept on the live app
///   (`stateCache`) while its version and the stored values are the same;
/// - the page (`renderPage`, below), kept on the live app (`pageCache`) on the same terms, for the
///   same session id and URL, once it is asked for a second time;
/// - a new session's first state (`freshState`), made once for every new session.
///
/// An action drops the live app's two (`noteChanges`): it may change what a screen shows without
/// a new version until it is done.
extension Shell {
    /// The longest URL whose page is kept for the next request (twice `RequestChecks.maxPathBytes`:
    /// a page path with its `next`).
    static let maxKeptPageTargetBytes = 2 * RequestChecks.maxPathBytes

    /// The whole page: the layout around the visible screen's fragment, with the security headers.
    /// It is prepared once for as long as nothing it shows changes: the version, the values, the
    /// session id (the forms' token) and the URL (`?next=` reaches the login form, `?launch=` adds
    /// the launch form).
    func renderPage(
        _ app: LiveApp, _ session: SessionContext, target: String, launch: LaunchLink? = nil
    )
        -> Response
    {
        let values = session.storedValues
        let userVersion = session.userStoreVersion
        if let cache = app.pageCache, cache.version == app.root.version, cache.id == session.id,
            cache.target == target, cache.values == values, cache.userVersion == userVersion
        {
            return .prepared(cache.response)
        }
        let response = PreparedResponse(makePage(app, session, launch: launch))
        // Kept once it is asked for again (a reload, a page read over and over): most pages are
        // rendered once per visit, and a kept page was 6 of the 12 KB a visitor's session held.
        // A URL longer than any of the app's own (a long query, sent to fill memory) is never
        // kept: the page would hold it with the session until the session ends.
        var hasher = Hasher()
        hasher.combine(app.root.version)
        hasher.combine(session.id)
        hasher.combine(target)
        let rendered = hasher.finalize()
        guard app.pageRendered == rendered, target.utf8.count <= Self.maxKeptPageTargetBytes,
            app.mayKeep(response)
        else {
            app.pageRendered = rendered
            app.pageCache = nil
            return .prepared(response)
        }
        app.pageCache = KeptPage(
            version: app.root.version, values: values, userVersion: userVersion, id: session.id, target: target,
            response: response)
        return .prepared(response)
    }
}

/// A page a live app keeps for the next request (`LiveApp.pageCache`), with what it is valid
/// for. A box of its own: an app keeps a page only once it was asked for twice, and these fields
/// inline took 72 bytes of every session's app.
final class KeptPage {
    /// The version it shows.
    let version: Int
    /// The stored values it shows.
    let values: [String: DefaultsValue]
    /// The version of the user's store it shows (`nil`: logged out).
    let userVersion: Int64?
    /// The session id its forms' token was made from.
    let id: SessionID
    /// The URL it was rendered for.
    let target: String
    /// The page.
    let response: PreparedResponse

    init(
        version: Int, values: [String: DefaultsValue], userVersion: Int64?, id: SessionID, target: String,
        response: PreparedResponse
    ) {
        self.version = version
        self.values = values
        self.userVersion = userVersion
        self.id = id
        self.target = target
        self.response = response
    }
}
