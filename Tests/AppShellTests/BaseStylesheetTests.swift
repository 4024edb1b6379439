import AppShell
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// The base stylesheet is the framework's: built in from
/// `Sources/AppShell/Pages/Resources/appshell.css`, served from memory at its versioned URL with a
/// static file's caching headers, and linked by every page before the app's own stylesheets, in an
/// app whose public directory has no copy of it.
@Suite struct BaseStylesheetTests {
    /// It styles the framework's markup, never a screen of the demo's by name.
    @Test func itNamesNoScreen() {
        let css = String(decoding: BaseStylesheet.bytes, as: UTF8.self)
        for name in ["splash", "login", "main", "list", "second", "offline-title"] {
            #expect(!css.contains(".screen-\(name)"), "appshell.css styles the demo's \(name) screen")
        }
        for piece in ["prefers-reduced-motion", "prefers-color-scheme: dark", "[role=\"dialog\"]", ".anim-push-in"] {
            #expect(css.contains(piece))
        }
    }

    @Test(arguments: TestMode.allCases) func anAppWithoutACopyServesTheStylesheet(mode: TestMode) throws {
        let folder = try TemporaryDirectory("basestylesheet")
        defer { folder.remove() }
        let client = try PageScriptTests.start(mode, publicDirectory: folder).client()
        let url = "/appshell.css?v=\(BaseStylesheet.version)"
        let css = try client.get(url)
        #expect(css.status == 200)
        #expect(css.body == BaseStylesheet.bytes)
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(css.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(css.headers["X-Content-Type-Options"] == "nosniff")
        let etag = try #require(css.headers["ETag"])
        #expect(etag == "\"\(BaseStylesheet.version)\"")
        let again = try client.get(url, headers: [("If-None-Match", "W/\(etag)")])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(try client.get(url, headers: [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try client.get("/appshell.css").headers["Cache-Control"] == "public, max-age=600")
        let head = try client.send("HEAD", url, headers: [], body: [])
        #expect(head.status == 200)
        #expect(head.headers["ETag"] == etag)
    }

    @Test func everyPageLinksItBeforeTheAppsStylesheets() {
        let chrome = PageChrome(name: "Probe", stylesheets: ["own.css", "appshell.css", "more.css"])
        #expect(chrome.files == ["appshell.css", "own.css", "more.css", "app.js"])
        let assets = AssetVersions(directory: "/nonexistent", names: chrome.files)
        #expect(assets.url("appshell.css") == "/appshell.css?v=\(BaseStylesheet.version)")
        let own = PageChrome(name: "Probe", stylesheets: ["own.css"], linksBaseStylesheet: false)
        #expect(own.files == ["own.css", "app.js"])
    }

    @Test(arguments: TestMode.allCases) func thePageLinksItFirst(mode: TestMode) throws {
        let folder = try TemporaryDirectory("basestylesheet")
        defer { folder.remove() }
        try "p{}".write(toFile: folder.path + "/own.css", atomically: true, encoding: .utf8)
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = folder.path
        let server = try ShellServer(
            configuration: configuration, application: ContextProbeApp(), pagePaths: [],
            chrome: PageChrome(name: "Probe", stylesheets: ["own.css"]))
        let client = try TestServer(mode, responder: try server.makeResponder()).client()
        let page = try client.get("/", headers: [("Accept", "text/html")]).text
        let base = try #require(
            page.range(of: "<link rel=\"stylesheet\" href=\"/appshell.css?v=\(BaseStylesheet.version)\">"))
        let own = try #require(page.range(of: "<link rel=\"stylesheet\" href=\"/own.css?v="))
        #expect(base.lowerBound < own.lowerBound)
        let first = try #require(page.range(of: "<link rel=\"stylesheet\""))
        #expect(first.lowerBound == base.lowerBound)
    }
}
