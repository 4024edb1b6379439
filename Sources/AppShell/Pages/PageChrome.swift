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
    /// The app's own stylesheets every page links, as files of the public directory (e.g.
    /// `app.css`), after the framework's base stylesheet.
    public var stylesheets: [String]
    /// Whether every page links the framework's base stylesheet (`BaseStylesheet`, served by the
    /// framework at `/appshell.css`: the app bar, screens, lists, forms, buttons, the sheet, the
    /// transitions, dark mode) before `stylesheets`. True by default; an app with a design all
    /// its own may leave it out.
    public var linksBaseStylesheet: Bool
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

    /// Chrome named `name` that links the base stylesheet (unless `linksBaseStylesheet` is false)
    /// and then `stylesheets`, loads the shell's page script (unless `loadsPageScript` is false)
    /// and then `scripts`, in `language`, with the app bar `appBarHTML` (by default the app's name
    /// in a `header.app-bar`).
    public init(
        name: String, stylesheets: [String] = [], linksBaseStylesheet: Bool = true, scripts: [String] = [],
        loadsPageScript: Bool = true, language: String = "en", appBarHTML: String? = nil
    ) {
        self.name = name
        // The base stylesheet or the page script named in the app's lists too is linked once.
        self.stylesheets =
            linksBaseStylesheet ? stylesheets.filter { $0 != BaseStylesheet.fileName } : stylesheets
        self.linksBaseStylesheet = linksBaseStylesheet
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
    public var files: [String] { allStylesheets + allScripts }

    /// The stylesheets every page links, in order: the base stylesheet first when the chrome
    /// links it.
    var allStylesheets: [String] { (linksBaseStylesheet ? [BaseStylesheet.fileName] : []) + stylesheets }

    /// The scripts every page loads, in order: the page script first when the chrome loads it.
    var allScripts: [String] { (loadsPageScript ? [PageScript.fileName] : []) + scripts }

    /// The `<head>` lines that link the stylesheets and load the scripts, at their versioned URLs.
    func headHTML(assets: AssetVersions) -> String {
        let styles = allStylesheets.map { "<link rel=\"stylesheet\" href=\"\(HTML.escape(assets.url($0)))\">\n" }
        let scripts = allScripts.map { "<script type=\"module\" src=\"\(HTML.escape(assets.url($0)))\"></script>\n" }
        return (styles + scripts).joined()
    }
}
