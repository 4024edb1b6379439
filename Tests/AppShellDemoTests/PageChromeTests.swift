import AppShell
import AppShellDemo
import AppShellTesting
import Foundation
import Testing

/// The page chrome is the app's: another app's name, assets, language and app bar reach every page
/// and its JSON title, and nothing of the demo's (its name, its stylesheet) is put there by the
/// framework.
@Suite struct PageChromeTests {
    static func start(_ chrome: PageChrome) throws -> (ShellServer, LiveServer) {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let environment = DemoEnvironment(splashDelayMilliseconds: 0)
        let server = try ShellServer(
            configuration: configuration, application: DemoApp(environment: environment), chrome: chrome)
        return (server, try LiveServer(responder: try server.makeResponder()))
    }

    @Test func thePageShowsTheAppsChromeAndNoOther() throws {
        let chrome = PageChrome(
            name: "Notes & Co", stylesheets: ["notes.css"], scripts: ["app.js"], language: "fr",
            appBarHTML: "<nav class=\"notes-bar\">Notes</nav>")
        let (_, live) = try Self.start(chrome)
        let client = live.client()
        let page = try client.get("/login", headers: [("Accept", "text/html")])
        #expect(page.status == 200)
        #expect(page.text.contains("<html lang=\"fr\">"))
        #expect(page.text.contains("<title>Log in — Notes &amp; Co</title>"))
        #expect(page.text.contains("<link rel=\"stylesheet\" href=\"/notes.css\">"))
        #expect(page.text.contains("<script type=\"module\" src=\"/app.js?v="))
        #expect(page.text.contains("<nav class=\"notes-bar\">Notes</nav>"))
        #expect(!page.text.contains("AppShell"))
        #expect(!page.text.contains("app.css"))
        #expect(!page.text.contains("app-bar"))
        let answer = try client.postJSON(
            "/api/actions", #"{"action": "launch", "source": "notification"}"#,
            headers: [("X-AppShell-Fragment", "1")]
        ).json
        #expect(answer["title"] == "Log in — Notes & Co")
    }

    @Test func theDefaultAppBarHoldsTheAppsName() throws {
        let (_, live) = try Self.start(PageChrome(name: "Notes"))
        let page = try live.client().get("/login", headers: [("Accept", "text/html")])
        #expect(page.text.contains("<header class=\"app-bar\"><p class=\"app-name\">Notes</p></header>"))
        #expect(page.text.contains("<title>Log in — Notes</title>"))
        // Only the framework's base stylesheet: the chrome names none of the app's.
        let stylesheets = page.text.components(separatedBy: "rel=\"stylesheet\"").count - 1
        #expect(stylesheets == 1)
        #expect(page.text.contains("<link rel=\"stylesheet\" href=\"/appshell.css?v=\(BaseStylesheet.version)\">"))
    }
}
