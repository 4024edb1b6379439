import AppShellHTTP
import AppShellJSON
import FoundationEssentials

/// The app's half of the web app shell: what makes the site installable and lets it open offline.
///
/// The framework serves, from these values, the Web App Manifest (`manifestPath`), the service
/// worker (`workerPath`: the app's worker script with the list of the shell's files and their
/// version put in front) and the offline page (`offlinePath`: the app's offline fragment in the
/// page layout), and links the manifest and the icons from every page. The names, colours, icons
/// and the offline screen are the app's (e.g. the demo's `DemoWebApp`).
public struct InstallableWebApp: Sendable {
    /// Where the manifest is served.
    public static let manifestPath = "/manifest.webmanifest"
    /// Where the service worker is served (at the root, so that its scope is the whole site).
    public static let workerPath = "/sw.js"
    /// Where the offline page is served (the worker precaches it and shows it for a page it
    /// cannot load).
    public static let offlinePath = "/offline"
    /// Where a browser looks for an icon by itself: it is led (303) to the manifest's first icon
    /// whose purpose is `any`, at its versioned URL.
    public static let faviconPath = "/favicon.ico"

    /// The manifest.
    public let manifest: WebAppManifest
    /// The public files the worker precaches, by name (`app.css`, `icons/icon-192.png`…): each
    /// is precached at its versioned URL. The offline page is added to them.
    public let shellFiles: [String]
    /// The icon iOS puts on the home screen (`apple-touch-icon`), a file of the public directory.
    public let touchIcon: String?
    /// The offline page's title.
    public let offlineTitle: String
    /// The offline page's content, an HTML fragment (e.g. the splash saying "You are offline").
    /// The page's script retries the connection and reloads when it is back; an element with
    /// `data-retry` is a button that retries at once.
    public let offlineHTML: String
    /// The worker script's text (read from the public directory), or `nil` when there is none:
    /// then nothing registers a worker.
    public let workerSource: String?

    /// The app's installable shell; `workerScript` names the worker's script in `directory`
    /// (read once, here).
    public init(
        manifest: WebAppManifest, shellFiles: [String], touchIcon: String? = nil, offlineTitle: String,
        offlineHTML: String, directory: String, workerScript: String = "service-worker.js"
    ) {
        self.manifest = manifest
        self.shellFiles = shellFiles
        self.touchIcon = touchIcon
        self.offlineTitle = offlineTitle
        self.offlineHTML = offlineHTML
        workerSource = FileManager.default.contents(atPath: directory + "/" + workerScript).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// The lines every page's `<head>` gets: the theme colour, the manifest and the icons.
    func headHTML(assets: AssetVersions) -> String {
        var lines = [
            "<meta name=\"theme-color\" content=\"\(HTML.escape(manifest.themeColor))\">",
            "<link rel=\"manifest\" href=\"\(InstallableWebApp.manifestPath)\">",
        ]
        if let icon = manifest.icons.first(where: { $0.purpose == "any" }) {
            lines.append(
                "<link rel=\"icon\" href=\"\(HTML.escape(assets.url(icon.file)))\" sizes=\"\(icon.size)x\(icon.size)\">"
            )
        }
        if let touchIcon {
            lines.append("<link rel=\"apple-touch-icon\" href=\"\(HTML.escape(assets.url(touchIcon)))\">")
        }
        lines.append("<meta name=\"apple-mobile-web-app-title\" content=\"\(HTML.escape(manifest.shortName))\">")
        lines.append("<meta name=\"mobile-web-app-capable\" content=\"yes\">")
        lines.append("<meta name=\"apple-mobile-web-app-capable\" content=\"yes\">")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The worker as served: the shell's URLs and a version that hashes everything the worker
    /// stores (the file versions, the offline page, the manifest and the script itself), so that
    /// any change of the shell is a new worker, which fills a new cache and deletes the old.
    func workerScript(assets: AssetVersions, offlinePage: [UInt8], manifest: [UInt8]) -> [UInt8]? {
        guard let workerSource else { return nil }
        let files = JSON.array((shellFiles.map(assets.url) + [InstallableWebApp.offlinePath]).map(JSON.string))
        let list =
            "const SHELL_FILES = \(String(decoding: files.serialized, as: UTF8.self));\n"
            + "const OFFLINE_URL = \"\(InstallableWebApp.offlinePath)\";\n"
        let version = AssetVersions.hash(Array(list.utf8) + offlinePage + manifest + Array(workerSource.utf8))
        let prelude =
            "// Served by AppShell: the service worker script below, after the shell's files and version.\n"
            + "const SHELL_VERSION = \"\(version)\";\n" + list
        return Array((prelude + workerSource).utf8)
    }
}
