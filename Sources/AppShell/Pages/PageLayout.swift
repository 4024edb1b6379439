import AppShellHTTP

/// The HTML document around every page the shell serves — a screen's page, the offline page:
/// the head (the chrome's stylesheets and scripts, the installable app's lines), the app bar with
/// the app's name, then the page's `main`; and the security headers every HTML page carries.
/// Made once, from the app's chrome, when the shell is made.
struct PageLayout: Sendable {
    /// The app's name, language, stylesheets, scripts and app bar.
    let chrome: PageChrome
    /// The versions of the page's assets.
    let assets: AssetVersions
    /// The app's installable shell, whose lines the head carries, if it has one.
    let webApp: InstallableWebApp?

    /// The app's name in titles and the app bar: the chrome's.
    var appName: String { chrome.name }

    /// A page's title: "<screen title> — <app name>", or the app's name alone when the screen is
    /// titled after the app (a home screen called "Notes" in Notes is "Notes", not "Notes — Notes").
    func title(of screenTitle: String) -> String {
        screenTitle == appName || screenTitle.isEmpty ? appName : screenTitle + " — " + appName
    }

    /// A whole document: the head (the chrome's stylesheets and scripts, and the installable app's
    /// lines) and the app bar with the app's name, then `main`; `title` is the screen's, which
    /// `title(of:)` completes with the app's name.
    func document(title: String, extraHead: String = "", main: String) -> String {
        let worker = webApp?.workerSource != nil ? " data-service-worker=\"\(InstallableWebApp.workerPath)\"" : ""
        return """
            <!doctype html>
            <html lang="\(HTML.escape(chrome.language))"\(worker)>
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(self.title(of: title)))</title>
            \(chrome.headHTML(assets: assets))\(webApp?.headHTML(assets: assets) ?? "")\(extraHead)</head>
            <body>
            \(chrome.appBar)
            \(main)</body>
            </html>
            """
    }

    /// The headers every HTML page carries: no inline script or style, no framing, no sniffing.
    static func addSecurityHeaders(_ response: inout Response) {
        response.headers.replaceOrAdd(name: "Content-Security-Policy", value: SecurityHeaders.contentSecurityPolicy)
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
    }
}
