import AppShellHTTP
import AppShellSessions

/// The answers the shell prepares once and serves again for as long as what they show is the same:
///
/// - the state (`GET /api/state`, the hot path): `LiveApp.stateResponse`, kept on the live app
///   (`stateCache`) while its version and the stored values are the same;
/// - the page (`renderPage`, below), kept on the live app (`pageCache`) on the same terms, for the
///   same session id and URL;
/// - a new session's first state (`freshState`), made once for every new session.
///
/// An action drops the live app's two (`noteChanges`): it may change what a screen shows without
/// a new version until it is done.
extension Shell {
    /// The whole page: the layout around the visible screen's fragment, with the security headers.
    /// It is prepared once for as long as nothing it shows changes: the version, the values, the
    /// session id (the forms' token) and the URL (`?next=` reaches the login form, `?launch=` adds
    /// the launch form).
    func renderPage(
        _ shell: LiveApp, _ session: SessionContext, target: String, launch: String? = nil
    )
        -> Response
    {
        let values = session.storedValues
        if let cache = shell.pageCache, cache.version == shell.root.version, cache.id == session.id,
            cache.target == target, cache.values == values
        {
            return .prepared(cache.response)
        }
        let response = PreparedResponse(makePage(shell, session, launch: launch))
        shell.pageCache = (shell.root.version, values, session.id, target, response)
        return .prepared(response)
    }
}
