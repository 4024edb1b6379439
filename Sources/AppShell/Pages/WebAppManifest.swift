import AppShellHTTP
import AppShellJSON

/// What an app says about itself to be installed as a web app (the Web App Manifest, W3C):
/// its names, the colours of the window and of the system's launch screen, and its icons.
///
/// The framework serves it at `InstallableWebApp.manifestPath`; the values are the app's own
/// (the demo's are in `DemoWebApp`).
public struct WebAppManifest: Sendable {
    /// One icon: a file of the public directory, its size in pixels (square) and its purpose.
    public struct Icon: Sendable {
        /// The file's name in the public directory, e.g. `icons/icon-192.png`.
        public let file: String
        /// Its width and height in pixels.
        public let size: Int
        /// `any` (shown as it is) or `maskable` (drawn to the edges; the system cuts its shape).
        public let purpose: String

        /// An icon `file` of `size` pixels for `purpose`.
        public init(file: String, size: Int, purpose: String = "any") {
            self.file = file
            self.size = size
            self.purpose = purpose
        }
    }

    /// The app's name, under its icon when there is room and in the task switcher.
    public let name: String
    /// The short name, where the name does not fit (the home screen).
    public let shortName: String
    /// The page the installed app opens at (the server redirects `/` to the session's screen).
    public let startURL: String
    /// The colour of the window's title bar or status bar (a CSS colour).
    public let themeColor: String
    /// The colour of the launch screen the system shows before the first paint (the page's).
    public let backgroundColor: String
    /// The icons; installable needs one of at least 144 px, and 192 and 512 are the usual.
    public let icons: [Icon]

    /// A manifest; `display` is always `standalone` (a window of its own, no address bar) and the
    /// scope the whole site.
    public init(
        name: String, shortName: String, startURL: String = "/", themeColor: String, backgroundColor: String,
        icons: [Icon]
    ) {
        self.name = name
        self.shortName = shortName
        self.startURL = startURL
        self.themeColor = themeColor
        self.backgroundColor = backgroundColor
        self.icons = icons
    }

    /// The manifest's JSON, with each icon at its versioned URL.
    package func json(assets: AssetVersions) -> JSON {
        .object([
            "id": .string("/"),
            "name": .string(name),
            "short_name": .string(shortName),
            "start_url": .string(startURL),
            "scope": .string("/"),
            "display": .string("standalone"),
            "theme_color": .string(themeColor),
            "background_color": .string(backgroundColor),
            "icons": .array(
                icons.map { icon in
                    .object([
                        "src": .string(assets.url(icon.file)),
                        "sizes": .string("\(icon.size)x\(icon.size)"),
                        "type": .string(MediaType.forFile(icon.file)),
                        "purpose": .string(icon.purpose),
                    ])
                }),
        ])
    }
}
