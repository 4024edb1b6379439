import AppShell
import AppShellHTTP
import AppShellSessions
import AppShellTesting
import Testing

/// A page's title is "<screen title> — <app name>", and the app's name alone when the screen is
/// titled after the app: no "Probe — Probe".
@Suite struct PageTitleTests {
    /// The probe app (its one screen is titled "Probe") under the app name `name`.
    static func client(_ mode: TestMode, appName name: String) throws -> any HTTPTestClient {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        let shell = Shell(
            application: ContextProbeApp(), registry: registry,
            cookie: SessionCookie(baseName: "probe_session", secure: false), chrome: PageChrome(name: name))
        var router = Router()
        shell.install(into: &router, pagePaths: [])
        return try TestServer(mode, responder: router).client()
    }

    /// The page's `<title>` and the title the page's script sets after an action.
    static func titles(_ client: any HTTPTestClient) throws -> (page: String?, script: String?) {
        let page = try client.page("/").text
        let title = page.components(separatedBy: "<title>").dropFirst().first?.components(separatedBy: "</title>").first
        let fragment = try client.postJSON(
            "/api/actions", #"{"action": "touch"}"#, headers: [("X-AppShell-Fragment", "1")])
        return (title, fragment.json["title"]?.stringValue)
    }

    @Test(arguments: TestMode.allCases) func aScreenTitledAfterTheAppIsTheAppsNameAlone(mode: TestMode) throws {
        let titles = try Self.titles(try Self.client(mode, appName: "Probe"))
        #expect(titles.page == "Probe")
        #expect(titles.script == "Probe")
    }

    @Test(arguments: TestMode.allCases) func anotherScreensTitleEndsWithTheAppsName(mode: TestMode) throws {
        let titles = try Self.titles(try Self.client(mode, appName: "Probe & Co"))
        #expect(titles.page == "Probe — Probe &amp; Co")
        #expect(titles.script == "Probe — Probe & Co")
    }
}
