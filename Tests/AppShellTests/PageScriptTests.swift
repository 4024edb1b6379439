import AppShell
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// The shell's page script is the framework's: built in from
/// `Sources/AppShell/Pages/Resources/app.js`, served from memory at its versioned URL with a static
/// file's caching headers, and loaded by every page of an app whose public directory has no copy
/// of it.
@Suite struct PageScriptTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A server of the probe app over `publicDirectory` (empty: no `app.js` in it).
    static func start(_ mode: TestMode, publicDirectory: TemporaryDirectory) throws -> TestServer {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = publicDirectory.path
        configuration.staticMaxAgeSeconds = 600
        let server = try ShellServer(
            configuration: configuration, application: ContextProbeApp(), pagePaths: [],
            chrome: PageChrome(name: "Probe"))
        return try TestServer(mode, responder: try server.makeResponder())
    }

    @Test(arguments: TestMode.allCases) func anAppWithoutACopyServesTheScript(mode: TestMode) throws {
        let folder = try TemporaryDirectory("pagescript")
        defer { folder.remove() }
        let client = try Self.start(mode, publicDirectory: folder).client()
        let page = try client.get("/", headers: [("Accept", "text/html")])
        let url = "/app.js?v=\(PageScript.version)"
        #expect(page.text.contains("<script type=\"module\" src=\"\(url)\"></script>"))
        let script = try client.get(url)
        #expect(script.status == 200)
        #expect(script.body == PageScript.bytes)
        #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(script.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(script.headers["X-Content-Type-Options"] == "nosniff")
        let etag = try #require(script.headers["ETag"])
        #expect(etag == "\"\(PageScript.version)\"")
        let again = try client.get(url, headers: [("If-None-Match", "W/\(etag)")])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(try client.get(url, headers: [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try client.get("/app.js").headers["Cache-Control"] == "public, max-age=600")
        let head = try client.send("HEAD", url, headers: [], body: [])
        #expect(head.status == 200)
        #expect(head.headers["ETag"] == etag)
    }

    @Test func theChromeLoadsTheScriptOnceAndFirst() {
        let chrome = PageChrome(name: "Probe", scripts: ["extra.js", "app.js"])
        #expect(chrome.files == ["appshell.css", "app.js", "extra.js"])
        let own = PageChrome(name: "Probe", linksBaseStylesheet: false, scripts: ["own.js"], loadsPageScript: false)
        #expect(own.files == ["own.js"])
    }
}
