import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// The pages: a page URL opened on the live app (or on a throwaway copy, for a request that must
/// change nothing), rendered in the `PageLayout`; and the state with what a page needs to show it.
extension Shell {
    /// A page URL: makes the session show what the path names, then renders it — or redirects
    /// (`/` to the current page, a logged-out user to `/login?next=…`), or 404.
    ///
    /// `?launch=<source>` (a link from a notification), with the parameters of that source's case
    /// (`?launch=note&id=1`), changes nothing on GET: it is carried to
    /// the page to show, which offers the launch as a form. The page's script sends it at once;
    /// without JavaScript the user presses its button. So a link, a prefetch or another site's
    /// navigation cannot change the session's values. A navigation another site started is not
    /// offered the launch at all (`RequestChecks.isFromAnotherSite`): the script would send the
    /// form at once, so a link elsewhere would launch for the user (issue 31, finding 9).
    ///
    /// Opening a page URL is navigation: like a universal link or state restoration on iOS it
    /// shows the screen it names (idempotently: the same URL again changes nothing more). A
    /// request that must change nothing at all — HEAD, a prefetch — gets what the URL would show,
    /// opened on a throwaway copy of the app (see `preview`).
    func page(_ context: ShellRequestContext) throws -> Response {
        let (request, session) = (context.request, context.session)
        let app = context.isSafeOnly ? preview(of: context.app, session) : context.app
        let launch = RequestChecks.isFromAnotherSite(request) ? nil : LaunchLink(request, application)
        let next = context.next
        switch application.open(path: request.path, next: next, in: app) {
        case .show:
            return renderPage(app, session, target: request.target, launch: launch)
        case .redirect(let location):
            guard let launch else { return .redirect(to: location) }
            return .redirect(to: location + (location.contains("?") ? "&" : "?") + launch.query)
        case .notFound:
            throw HTTPError.notFound("no page at \(request.path)")
        }
    }

    /// A throwaway copy of `app`, rebuilt from its snapshot as it is now, that reads a copy of
    /// the session's defaults, rotates nothing and schedules nothing: what it is made to show is
    /// rendered and dropped, and the live app, the values and the version stay as they were.
    /// (What the snapshot does not hold — a login's message — is not on the copy.)
    func preview(of app: LiveApp, _ session: SessionContext) -> LiveApp {
        let defaults = session.defaults.detachedCopy()
        let copy =
            application.restoreApp(from: app.snapshot, defaults: defaults, environment: environment, now: clock())
            ?? application.makeApp(defaults: defaults, environment: environment, now: clock())
        copy.root.isPreview = true
        copy.root.session = session
        copy.root.services = ShellServices(shell: self, channel: copy.channel)
        return copy
    }

    /// The launch from a link, as a form the page's script sends (`#launch`).
    private func launchForm(_ launch: LaunchLink, _ session: SessionContext) -> String {
        let token = HTML.escape(tokens.token(for: session.id.bytes))
        let fields = launch.fields.map { name, value in
            "<input type=\"hidden\" name=\"\(HTML.escape(name))\" value=\"\(HTML.escape(value))\">\n"
        }
        return """
            <aside class="launch" aria-label="Opened from a notification">
            <form id="launch" method="post" action="/actions" data-action="launch">
            <input type="hidden" name="csrf" value="\(token)">
            <input type="hidden" name="action" value="launch">
            \(fields.joined())<button type="submit">Open what the notification shows</button>
            </form>
            </aside>

            """
    }

    /// The page of what `app` shows, with the launch form when the URL carried one.
    func makePage(_ app: LiveApp, _ session: SessionContext, launch: LaunchLink?) -> Response {
        let visible = app.root.visibleScreen
        let refresh =
            app.isStarting
            ? "<noscript><meta http-equiv=\"refresh\" content=\"1\"></noscript>\n" : ""
        let main = """
            <main id="screen" \(screenAttributes(app))>
            \(app.visibleHTML())
            </main>
            \(launch.map { launchForm($0, session) } ?? "")<div id="banner" class="banner" role="status" aria-live="polite" hidden></div>

            """
        let html = pageLayout.document(title: visible.title, extraHead: refresh, main: main)
        var response = Response.html(html)
        PageLayout.addSecurityHeaders(&response)
        return response
    }

    private func screenAttributes(_ app: LiveApp) -> String {
        let stack = (app.root.navigation?.viewControllers.map(\.name) ?? []).joined(separator: " ")
        return [
            ("data-screen", app.root.visibleScreen.name), ("data-version", String(app.root.version)),
            ("data-url", application.url(of: app)), ("data-stack", stack),
            ("data-presented", app.root.presented?.name ?? ""), ("data-epoch", app.channel),
            ("data-starting", app.isStarting ? "true" : ""), ("data-launch-action", ActionDescription.launch.name),
        ].map { "\($0.0)=\"\(HTML.escape($0.1))\"" }.joined(separator: " ")
    }

    /// The state with what a page needs to show it: the fragment, its URL and title.
    func payload(_ app: LiveApp, _ session: SessionContext) -> JSON {
        var members =
            app.state(defaults: session.defaults, userDefaults: session.userDefaults).objectValue ?? [:]
        members["html"] = .string(app.visibleHTML())
        members["url"] = .string(application.url(of: app))
        members["title"] = .string(pageLayout.title(of: app.root.visibleScreen.title))
        members["starting"] = .bool(app.isStarting)
        return .object(members)
    }
}
