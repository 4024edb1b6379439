import AppShellHTTP
import AppShellJSON
import AppShellSessions

extension Shell {
    /// A page URL: makes the session show what the path names, then renders it — or redirects
    /// (`/` to the current page, a logged-out user to `/login?next=…`), or 404.
    func page(_ request: Request, _ shell: ShellSession, _ session: SessionContext) throws -> Response {
        if let source = request.query("launch") {
            do {
                try apply(ScreenAction(name: "launch", parameters: ["source": .string(source)]), shell, session)
            } catch {
                throw HTTPError(HTTPStatus(rawValue: error.status), error.message)
            }
            return .redirect(to: application.url(of: shell))
        }
        let next = request.query("next").flatMap { Shell.isSameSitePath($0) ? $0 : nil }
        switch application.open(path: request.path, next: next, in: shell) {
        case .show:
            return renderPage(shell, session, target: request.target)
        case .redirect(let location):
            return .redirect(to: location)
        case .notFound:
            throw HTTPError.notFound("no page at \(request.path)")
        }
    }

    /// The whole page: the layout around the visible screen's fragment, with the security headers.
    /// It is prepared once for as long as nothing it shows changes: the version, the values, the
    /// session id (the forms' token) and the URL (`?next=` reaches the login form).
    func renderPage(_ shell: ShellSession, _ session: SessionContext, target: String) -> Response {
        let values = session.storedValues
        if let cache = shell.pageCache, cache.version == shell.root.version, cache.id == session.id,
            cache.target == target, cache.values == values
        {
            return .prepared(cache.response)
        }
        let response = PreparedResponse(makePage(shell, session))
        shell.pageCache = (shell.root.version, values, session.id, target, response)
        return .prepared(response)
    }

    private func makePage(_ shell: ShellSession, _ session: SessionContext) -> Response {
        let visible = shell.root.visibleScreen
        let refresh =
            shell.coordinator.nextDeadline != nil
            ? "<noscript><meta http-equiv=\"refresh\" content=\"1\"></noscript>\n" : ""
        let html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(visible.title)) — AppShell</title>
            <link rel="stylesheet" href="\(HTML.escape(assets.url("app.css")))">
            <script type="module" src="\(HTML.escape(assets.url("app.js")))"></script>
            \(refresh)</head>
            <body>
            <header class="app-bar"><p class="app-name">AppShell</p></header>
            <main id="screen" \(screenAttributes(shell))>
            \(visible.renderHTML())
            </main>
            <div id="banner" class="banner" role="status" aria-live="polite" hidden></div>
            </body>
            </html>
            """
        var response = Response.html(html)
        Shell.addSecurityHeaders(&response)
        return response
    }

    private func screenAttributes(_ shell: ShellSession) -> String {
        let stack = (shell.root.navigation?.viewControllers.map(\.name) ?? []).joined(separator: " ")
        return [
            ("data-screen", shell.root.visibleScreen.name), ("data-version", String(shell.root.version)),
            ("data-url", application.url(of: shell)), ("data-stack", stack),
            ("data-presented", shell.root.presented?.name ?? ""),
        ].map { "\($0.0)=\"\(HTML.escape($0.1))\"" }.joined(separator: " ")
    }

    /// The state with what a page needs to show it: the fragment, its URL and title.
    func payload(_ shell: ShellSession, _ session: SessionContext) -> JSON {
        var members = shell.state(defaults: session.defaults).objectValue ?? [:]
        members["html"] = .string(shell.root.visibleScreen.renderHTML())
        members["url"] = .string(application.url(of: shell))
        members["title"] = .string(shell.root.visibleScreen.title + " — AppShell")
        return .object(members)
    }

    /// The headers every HTML page carries: no inline script or style, no framing, no sniffing.
    static func addSecurityHeaders(_ response: inout Response) {
        response.headers.replaceOrAdd(
            name: "Content-Security-Policy",
            value: "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
    }
}
