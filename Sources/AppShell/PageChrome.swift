import AppShellHTTP

/// What every page of an app shows around its screens: the app's name (in each page's title,
/// "Screen — Name", and in the app bar), the app bar (the navigation bar above every screen), the
/// page's language and the public files the page links (its stylesheets and its module scripts,
/// each at its content-versioned URL). It is the app's, like a UIKit app's window and appearance:
/// the framework renders it and knows none of its values. (A screen's own buttons — back, close —
/// are in the screen's HTML, as its actions.)
public struct PageChrome: Sendable {
    /// The app's name: the app bar's text and the end of every page's title.
    public var name: String
    /// The stylesheets every page links, as files of the public directory (e.g. `app.css`).
    public var stylesheets: [String]
    /// The app's own module scripts every page loads, as files of the public directory, after the
    /// shell's page script.
    public var scripts: [String]
    /// Whether every page loads the shell's page script (`PageScript`, served by the framework at
    /// `/app.js`: it sends forms as JSON and follows the event stream) before `scripts`. True by
    /// default; an app with no copy of it gets it.
    public var loadsPageScript: Bool
    /// The page's language (`<html lang>`), e.g. `en`.
    public var language: String
    /// The app bar's HTML, at the top of every page's body; `nil` for a `header.app-bar` holding
    /// the app's name in a `p.app-name`.
    public var appBarHTML: String?

    /// Chrome named `name` that links `stylesheets`, loads the shell's page script (unless
    /// `loadsPageScript` is false) and then `scripts`, in `language`, with the app bar
    /// `appBarHTML` (by default the app's name in a `header.app-bar`).
    public init(
        name: String, stylesheets: [String] = [], scripts: [String] = [], loadsPageScript: Bool = true,
        language: String = "en", appBarHTML: String? = nil
    ) {
        self.name = name
        self.stylesheets = stylesheets
        // The page script named in `scripts` too is loaded once.
        self.scripts = loadsPageScript ? scripts.filter { $0 != PageScript.fileName } : scripts
        self.loadsPageScript = loadsPageScript
        self.language = language
        self.appBarHTML = appBarHTML
    }

    /// The app bar as every page shows it.
    var appBar: String {
        appBarHTML ?? "<header class=\"app-bar\"><p class=\"app-name\">\(HTML.escape(name))</p></header>"
    }

    /// Every public file the chrome links, for `AssetVersions` and the service worker's precache.
    public var files: [String] { stylesheets + allScripts }

    /// The scripts every page loads, in order: the page script first when the chrome loads it.
    var allScripts: [String] { (loadsPageScript ? [PageScript.fileName] : []) + scripts }

    /// The `<head>` lines that link the stylesheets and load the scripts, at their versioned URLs.
    func headHTML(assets: AssetVersions) -> String {
        let styles = stylesheets.map { "<link rel=\"stylesheet\" href=\"\(HTML.escape(assets.url($0)))\">\n" }
        let scripts = allScripts.map { "<script type=\"module\" src=\"\(HTML.escape(assets.url($0)))\"></script>\n" }
        return (styles + scripts).joined()
    }
}
