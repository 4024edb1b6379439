import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension Shell {
    /// A page URL: makes the session show what the path names, then renders it — or redirects
    /// (`/` to the current page, a logged-out user to `/login?next=…`), or 404.
    ///
    /// `?launch=<source>` (a link from a notification) changes nothing on GET: it is carried to
    /// the page to show, which offers the launch as a form. The page's script sends it at once;
    /// without JavaScript the user presses its button. So a link, a prefetch or another site's
    /// navigation cannot change the session's values.
    ///
    /// Opening a page URL is navigation: like a universal link or state restoration on iOS it
    /// shows the screen it names (idempotently: the same URL again changes nothing more). A
    /// request that must change nothing at all — HEAD, a prefetch — gets what the URL would show,
    /// opened on a throwaway copy of the app (see `preview`).
    func page(_ request: Request, _ shell: LiveApp, _ session: SessionContext) throws -> Response {
        let shell = Shell.isSafeOnly(request) ? preview(of: shell, session) : shell
        let launch = request.query("launch")
        let next = request.query("next").flatMap { Shell.isSameSitePath($0) ? $0 : nil }
        switch application.open(path: request.path, next: next, in: shell) {
        case .show:
            return renderPage(shell, session, target: request.target, launch: launch)
        case .redirect(let location):
            guard let launch else { return .redirect(to: location) }
            let separator = location.contains("?") ? "&" : "?"
            return .redirect(to: location + separator + "launch=" + PercentEncoding.encode(launch))
        case .notFound:
            throw HTTPError.notFound("no page at \(request.path)")
        }
    }

    /// Whether `request` must change nothing (RFC 9110 §9.2.1): a HEAD, or a GET a browser sends
    /// ahead of a navigation that may never happen (`Sec-Purpose: prefetch`, also with
    /// `;prerender`, and the older `Purpose: prefetch`).
    static func isSafeOnly(_ request: Request) -> Bool {
        if request.method == .head { return true }
        if let purpose = request.headers["Sec-Purpose"] ?? request.headers["Purpose"] {
            return purpose.lowercased().hasPrefix("prefetch")
        }
        return false
    }

    /// A throwaway copy of `shell`, rebuilt from its snapshot as it is now, that reads a copy of
    /// the session's defaults, rotates nothing and schedules nothing: what it is made to show is
    /// rendered and dropped, and the live app, the values and the version stay as they were.
    /// (What the snapshot does not hold — a login's message — is not on the copy.)
    func preview(of shell: LiveApp, _ session: SessionContext) -> LiveApp {
        let defaults = session.defaults.detachedCopy()
        let copy =
            application.restoreApp(from: shell.snapshot, defaults: defaults, now: clock())
            ?? application.makeApp(defaults: defaults, now: clock())
        copy.root.isPreview = true
        copy.root.session = session
        copy.root.services = ShellServices(shell: self, channel: copy.channel)
        return copy
    }

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

    /// The launch from a link, as a form the page's script sends (`#launch`).
    private func launchForm(_ source: String, _ session: SessionContext) -> String {
        let token = HTML.escape(tokens.token(for: session.id.bytes))
        return """
            <aside class="launch" aria-label="Opened from a notification">
            <form id="launch" method="post" action="/actions" data-action="launch">
            <input type="hidden" name="csrf" value="\(token)">
            <input type="hidden" name="action" value="launch">
            <input type="hidden" name="source" value="\(HTML.escape(source))">
            <button type="submit">Open what the notification shows</button>
            </form>
            </aside>

            """
    }

    private func makePage(_ shell: LiveApp, _ session: SessionContext, launch: String?) -> Response {
        let visible = shell.root.visibleScreen
        let refresh =
            shell.isStarting
            ? "<noscript><meta http-equiv=\"refresh\" content=\"1\"></noscript>\n" : ""
        let main = """
            <main id="screen" \(screenAttributes(shell))>
            \(shell.visibleHTML())
            </main>
            \(launch.map { launchForm($0, session) } ?? "")<div id="banner" class="banner" role="status" aria-live="polite" hidden></div>

            """
        let html = layout(title: visible.title, extraHead: refresh, main: main)
        var response = Response.html(html)
        Shell.addSecurityHeaders(&response)
        return response
    }

    /// A whole document: the head (the chrome's stylesheets and scripts, and the installable app's
    /// lines) and the app bar with the app's name, then `main`.
    func layout(title: String, extraHead: String = "", main: String) -> String {
        let worker = webApp?.workerSource != nil ? " data-service-worker=\"\(InstallableWebApp.workerPath)\"" : ""
        return """
            <!doctype html>
            <html lang="\(HTML.escape(chrome.language))"\(worker)>
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title)) — \(HTML.escape(appName))</title>
            \(chrome.headHTML(assets: assets))\(webApp?.headHTML(assets: assets) ?? "")\(extraHead)</head>
            <body>
            \(chrome.appBar)
            \(main)</body>
            </html>
            """
    }

    /// The app's name in titles and the app bar: the chrome's.
    var appName: String { chrome.name }

    private func screenAttributes(_ shell: LiveApp) -> String {
        let stack = (shell.root.navigation?.viewControllers.map(\.name) ?? []).joined(separator: " ")
        return [
            ("data-screen", shell.root.visibleScreen.name), ("data-version", String(shell.root.version)),
            ("data-url", application.url(of: shell)), ("data-stack", stack),
            ("data-presented", shell.root.presented?.name ?? ""), ("data-epoch", shell.channel),
            ("data-starting", shell.isStarting ? "true" : ""), ("data-launch-action", ActionDescription.launch.name),
        ].map { "\($0.0)=\"\(HTML.escape($0.1))\"" }.joined(separator: " ")
    }

    /// The state with what a page needs to show it: the fragment, its URL and title.
    func payload(_ shell: LiveApp, _ session: SessionContext) -> JSON {
        var members = shell.state(defaults: session.defaults).objectValue ?? [:]
        members["html"] = .string(shell.visibleHTML())
        members["url"] = .string(application.url(of: shell))
        members["title"] = .string(shell.root.visibleScreen.title + " — " + appName)
        members["starting"] = .bool(shell.isStarting)
        return .object(members)
    }

    /// The headers every HTML page carries: no inline script or style, no framing, no sniffing.
    static func addSecurityHeaders(_ response: inout Response) {
        response.headers.replaceOrAdd(
            name: "Content-Security-Policy",
            value: "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                + "connect-src 'self'; worker-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; "
                + "frame-ancestors 'none'")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
    }
}
