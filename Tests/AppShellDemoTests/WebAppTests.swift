import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The installable web app's routes (issue 18): the manifest, the service worker and the offline
/// page, with their headers, and what every page links. The browser suite checks the worker at
/// work (tests/browser/test_webapp.py).
@Suite struct WebAppTests {
    /// A server over `publicDirectory` (the repository's `Public` by default).
    static func start(publicDirectory: String? = nil) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.publicDirectory =
            publicDirectory ?? CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    /// A copy of the repository's `Public` in a new temporary directory.
    static func copyOfPublic() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webapp-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: CommandTests.packageRoot.appendingPathComponent("Public"), to: directory)
        return directory
    }

    /// The JSON array the served worker precaches (`const SHELL_FILES = [...];`).
    static func shellFiles(_ script: String) throws -> [String] {
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("const SHELL_FILES = ") })
        let json = try JSON(parsing: Array(line.dropFirst("const SHELL_FILES = ".count).dropLast().utf8))
        return try #require(json.arrayValue).compactMap(\.stringValue)
    }

    /// The `SHELL_VERSION` of a served worker.
    static func version(_ script: String) throws -> String {
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("const SHELL_VERSION = ") })
        return String(line.dropFirst("const SHELL_VERSION = ".count))
    }

    @Test func theManifestIsServedWithItsMediaTypeAndNoSession() throws {
        let (_, live) = try Self.start()
        defer { _ = live.stop() }
        let client = live.client()
        let response = try client.get("/manifest.webmanifest")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/manifest+json")
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["Set-Cookie"] == nil)
        let manifest = response.json
        #expect(manifest["name"]?.stringValue == "AppShell")
        #expect(manifest["short_name"]?.stringValue == "AppShell")
        #expect(manifest["display"]?.stringValue == "standalone")
        #expect(manifest["start_url"]?.stringValue == "/")
        #expect(manifest["scope"]?.stringValue == "/")
        // The splash's colours: the page's background behind the launch, the app bar on top.
        #expect(manifest["background_color"]?.stringValue == "#f2f2f7")
        #expect(manifest["theme_color"]?.stringValue == "#ffffff")
        let icons = try #require(manifest["icons"]?.arrayValue)
        let kinds = Set(icons.map { "\($0["sizes"]?.stringValue ?? "") \($0["purpose"]?.stringValue ?? "")" })
        #expect(kinds == ["192x192 any", "512x512 any", "512x512 maskable"])
        for icon in icons {
            let source = try #require(icon["src"]?.stringValue)
            #expect(source.contains("?v="), "\(source) is not versioned")
            let image = try client.get(source)
            #expect(image.status == 200)
            #expect(image.headers["Content-Type"] == "image/png")
            // The PNG's width is the size the manifest says.
            let width = image.body.count >= 24 ? image.body[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
            #expect("\(width)x\(width)" == icon["sizes"]?.stringValue)
        }
    }

    /// A browser asks for `/favicon.ico` for a document that links no icon (an error page): it is
    /// led to the app's icon, so that no request ends in a 404 in the console.
    @Test func theFaviconLeadsToTheAppsIconWithoutASession() throws {
        let (_, live) = try Self.start()
        defer { _ = live.stop() }
        let client = live.client()
        let response = try client.get("/favicon.ico")
        #expect(response.status == 303)
        #expect(response.headers["Set-Cookie"] == nil)
        let location = try #require(response.headers["Location"])
        #expect(location.hasPrefix("/icons/icon-192.png?v="))
        let icon = try client.get(location)
        #expect(icon.status == 200)
        #expect(icon.headers["Content-Type"] == "image/png")
        #expect(client.cookies.isEmpty)
    }

    @Test func theWorkerIsServedAtTheRootForUpdatesToReachUsers() throws {
        let (_, live) = try Self.start()
        defer { _ = live.stop() }
        let client = live.client()
        let response = try client.get("/sw.js")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/javascript; charset=utf-8")
        // No max-age: the browser asks again at every navigation, so a new version reaches users.
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["Service-Worker-Allowed"] == "/")
        #expect(response.headers["Set-Cookie"] == nil)
        let source = try #require(
            FileManager.default.contents(
                atPath: CommandTests.packageRoot.appendingPathComponent("Public/service-worker.js").path))
        #expect(response.text.hasSuffix(String(decoding: source, as: UTF8.self)))
        #expect(try Self.version(response.text).count > 2)

        // It precaches exactly what the pages use, at the URLs they use, and the offline page.
        let files = try Self.shellFiles(response.text)
        let page = try client.get("/login", headers: [("Accept", "text/html")]).text
        for name in ["appshell.css", "app.css", "app.js", "icons/icon-192.png", "icons/apple-touch-icon.png"] {
            let url = try #require(files.first { $0.hasPrefix("/\(name)?v=") }, "\(name) is not precached")
            #expect(page.contains("\"\(url)\""), "the page links \(name) at another URL than \(url)")
        }
        for name in ["splash.svg", "icons/icon-512.png", "icons/icon-maskable-512.png"] {
            #expect(files.contains { $0.hasPrefix("/\(name)?v=") }, "\(name) is not precached")
        }
        #expect(files.contains("/offline"))
        #expect(!files.contains { $0.hasPrefix("/api/") || ["/", "/login", "/main"].contains($0) })
        for file in files { #expect(try client.get(file).status == 200, "\(file) is not served") }
    }

    @Test func aChangedShellFileIsANewWorkerVersion() throws {
        let directory = try Self.copyOfPublic()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, before) = try Self.start(publicDirectory: directory.path)
        let old = try before.client().get("/sw.js").text
        _ = before.stop()
        let stylesheet = directory.appendingPathComponent("app.css")
        var css = try Data(contentsOf: stylesheet)
        css.append(contentsOf: Array("\n/* a new version */\n".utf8))
        try css.write(to: stylesheet)
        let (_, after) = try Self.start(publicDirectory: directory.path)
        defer { _ = after.stop() }
        let new = try after.client().get("/sw.js").text
        #expect(try Self.version(new) != Self.version(old))
        let changed = Set(try Self.shellFiles(new)).symmetricDifference(try Self.shellFiles(old))
        #expect(changed.count == 2 && changed.allSatisfy { $0.hasPrefix("/app.css?v=") })
    }

    @Test func theOfflinePageIsTheSplashSayingSoWithoutASession() throws {
        let (_, live) = try Self.start()
        defer { _ = live.stop() }
        let response = try live.client().get("/offline")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["Set-Cookie"] == nil)
        #expect(response.headers["Content-Security-Policy"]?.contains("script-src 'self'") == true)
        #expect(response.text.contains("<main id=\"offline\" data-probe=\"/manifest.webmanifest\">"))
        #expect(response.text.contains("<h1 id=\"offline-title\" tabindex=\"-1\">You are offline</h1>"))
        #expect(response.text.contains("screen-splash"))
        #expect(response.text.contains("/app.js?v=") && response.text.contains("/app.css?v="))
        #expect(response.text.contains("/appshell.css?v="))
        #expect(!response.text.contains("csrf"))
    }

    @Test func everyPageLinksTheManifestAndTheWorkerAndTheCSPAllowsThem() throws {
        let (_, live) = try Self.start()
        defer { _ = live.stop() }
        let client = live.client()
        let login = try client.get("/login", headers: [("Accept", "text/html")])
        try client.logIn(username: "demo", password: "appshell", through: .form())
        for path in ["/login", "/main", "/main/list", "/main/second", "/offline"] {
            let page = try client.get(path, headers: [("Accept", "text/html")])
            let html = path == "/login" ? login.text : page.text
            #expect(html.contains("<html lang=\"en\" data-service-worker=\"/sw.js\">"), "\(path)")
            #expect(html.contains("<link rel=\"manifest\" href=\"/manifest.webmanifest\">"), "\(path)")
            #expect(html.contains("<meta name=\"theme-color\" content=\"#ffffff\">"), "\(path)")
            #expect(html.contains("<link rel=\"apple-touch-icon\" href=\"/icons/apple-touch-icon.png?v="), "\(path)")
            let policy = try #require((path == "/login" ? login : page).headers["Content-Security-Policy"])
            #expect(policy.contains("worker-src 'self'") && policy.contains("manifest-src 'self'"))
        }
    }

    @Test func withoutAWorkerScriptNothingRegistersOne() throws {
        let directory = try Self.copyOfPublic()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.removeItem(at: directory.appendingPathComponent("service-worker.js"))
        let (_, live) = try Self.start(publicDirectory: directory.path)
        defer { _ = live.stop() }
        let client = live.client()
        #expect(try client.get("/sw.js").status == 404)
        let page = try client.get("/login", headers: [("Accept", "text/html")]).text
        #expect(!page.contains("data-service-worker"))
        #expect(page.contains("<link rel=\"manifest\""))
    }
}
