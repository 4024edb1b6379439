import AppShellHTTP

/// The installable web app's routes: the manifest, the service worker, the offline page, the icon.
extension Shell {
    /// Adds the installable web app's routes: the manifest, the service worker, the offline
    /// page and `/favicon.ico`. None of them reads or makes a session, nor sends `Set-Cookie`: the worker fetches the
    /// shell without cookies, and nothing it stores depends on who asked. Each is made once, here.
    func installWebApp(_ webApp: InstallableWebApp, into router: inout Router) {
        let manifestBytes = webApp.manifest.json(assets: assets).serialized
        let manifest = Response(
            status: .ok,
            headers: [
                "Content-Type": "application/manifest+json", "Cache-Control": "no-cache",
                "X-Content-Type-Options": "nosniff",
            ], body: .bytes(manifestBytes))
        let preparedManifest = PreparedResponse(manifest)
        router.get(InstallableWebApp.manifestPath) { _ in .prepared(preparedManifest) }

        let offlineHTML = offlinePage(webApp)
        var offline = Response.html(offlineHTML)
        // Revalidated each time the worker installs; the worker is the one that keeps it.
        offline.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
        PageLayout.addSecurityHeaders(&offline)
        let preparedOffline = PreparedResponse(offline)
        router.get(InstallableWebApp.offlinePath) { _ in .prepared(preparedOffline) }

        // A browser asks for `/favicon.ico` for every document that links no icon (an error page,
        // a JSON or text answer opened in a tab): it is led to the app's icon, so that no request
        // of the browser's own ends in a 404 in its console.
        if let icon = webApp.manifest.icons.first(where: { $0.purpose == "any" }) {
            let location = assets.url(icon.file)
            router.get(InstallableWebApp.faviconPath) { _ in .redirect(to: location) }
        }

        let script = webApp.workerScript(assets: assets, offlinePage: Array(offlineHTML.utf8), manifest: manifestBytes)
        let preparedScript = script.map { bytes in
            PreparedResponse(
                Response(
                    status: .ok,
                    headers: [
                        "Content-Type": "text/javascript; charset=utf-8",
                        // Checked at every navigation: a new version reaches the next visit.
                        "Cache-Control": "no-cache",
                        "Service-Worker-Allowed": "/",
                        "X-Content-Type-Options": "nosniff",
                    ], body: .bytes(bytes)))
        }
        router.get(InstallableWebApp.workerPath) { request in
            guard let preparedScript else {
                throw HTTPError.notFound("no service worker: the app's worker script is not in the public directory")
            }
            return .prepared(preparedScript)
        }
    }

    /// The offline page: the app's offline fragment in the page layout, in `<main id="offline">`,
    /// whose `data-probe` the script fetches to learn that the network is back.
    func offlinePage(_ webApp: InstallableWebApp) -> String {
        pageLayout.document(
            title: webApp.offlineTitle,
            main:
                "<main id=\"offline\" data-probe=\"\(InstallableWebApp.manifestPath)\">\n\(webApp.offlineHTML)\n</main>\n"
        )
    }
}
