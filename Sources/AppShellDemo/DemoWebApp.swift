import AppShell

/// The demo's installable shell: its names, colours, icons and offline screen (the app's chrome;
/// the framework only serves them). To change the icons, see `scripts/make-icons.py`; the
/// colours are the splash's (Public/app.css: the page's background and the app bar's surface).
enum DemoWebApp {
    /// The icons of `Public/icons`, drawn by `scripts/make-icons.py` from the splash.
    static let icons = [
        WebAppManifest.Icon(file: "icons/icon-192.png", size: 192),
        WebAppManifest.Icon(file: "icons/icon-512.png", size: 512),
        WebAppManifest.Icon(file: "icons/icon-maskable-512.png", size: 512, purpose: "maskable"),
    ]
    /// The home screen icon for iOS (full bleed: iOS rounds it).
    static let touchIcon = "icons/apple-touch-icon.png"

    /// Every public file the pages use: versioned by content, and what the service worker
    /// precaches.
    static let shellFiles = ["appshell.css", "app.css", "app.js", "splash.svg"] + icons.map(\.file) + [touchIcon]

    /// The manifest: the splash's background behind the launch, the app bar's colour on top.
    static let manifest = WebAppManifest(
        name: "AppShell", shortName: "AppShell", startURL: "/", themeColor: "#ffffff", backgroundColor: "#f2f2f7",
        icons: icons)

    /// The demo's installable shell, its worker script read from `directory`.
    static func make(directory: String, assets: AssetVersions) -> InstallableWebApp {
        InstallableWebApp(
            manifest: manifest, shellFiles: shellFiles, touchIcon: touchIcon, offlineTitle: "Offline",
            offlineHTML: offlineHTML(assets: assets), directory: directory)
    }

    /// The splash's look saying "You are offline", with a button to try again now.
    static func offlineHTML(assets: AssetVersions) -> String {
        """
        <section class="screen screen-splash screen-offline" aria-labelledby="offline-title">
        <img src="\(HTML.escape(assets.url("splash.svg")))" alt="" width="96" height="96">
        <h1 id="offline-title" tabindex="-1">You are offline</h1>
        <p>AppShell opens where you were as soon as the connection is back.</p>
        <button type="button" data-retry>Try again</button>
        </section>
        """
    }
}
