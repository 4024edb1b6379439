import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// The form endpoint, `POST /actions`: the HTML forms that work without JavaScript. The form is
/// checked (Origin, the token) before any app is made (`FormSubmission`); the action then runs as
/// a JSON one does, and the answer is a 303 to the page to show.
extension Shell {
    /// `POST /actions`: an HTML form without JavaScript, checked as `FormSubmission` was made. The
    /// action runs and the answer is a 303 to the page to show.
    func performForm(_ form: FormSubmission, _ context: ShellRequestContext) throws -> Response {
        let (request, app, session) = (context.request, context.app, context.session)
        // Sent with an id a login or logout retired as it waited: nothing to act on. The browser
        // has the new id by now; `/` shows what it names.
        guard context.access != .retired else { return .redirect(to: "/") }
        let action = try makeAction(form.action, form.fields.mapValues { JSON.string($0) }, request)
        // A refused action still leads back to the page, which says why (e.g. the login message);
        // a malformed one (a field missing) is the form's mistake: 400, with what was wrong.
        let answer: @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response = {
            [self] error, request, app, _ in
            if let error, error.status == 400 { return .error(HTTPError.badRequest(error.message), for: request) }
            return .redirect(to: application.url(of: app))
        }
        return run(action, request, app, session, ifRetired: .redirect(to: "/"), answer: answer)
    }
}
