import AppShell
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The README's tutorial — a new screen with one action in one new file, plus the lines where
/// its coordinator declares and shows it — is code of this test target (`Tutorial/`), so it
/// compiles; the README must quote it as it is, and the screen works through the API, after a
/// restart too.
@Suite struct TutorialTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: CommandTests.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    static let screenFile = "Tests/AppShellDemoTests/Tutorial/AboutScreen.swift"
    static let appFile = "Tests/AppShellDemoTests/Tutorial/TutorialApp.swift"

    @Test func theReadmeQuotesTheNewScreensFileAndTheLinesThatShowIt() throws {
        let readme = try Self.read("README.md")
        let screen = try Self.read(Self.screenFile)
        #expect(screen.split(separator: "\n", omittingEmptySubsequences: false).count - 1 <= 40)
        #expect(readme.contains("```swift\n" + screen + "```"))
        // The lines the coordinator gains: each one follows a `// tutorial:line` marker.
        let lines = try Self.read(Self.appFile).components(separatedBy: "\n")
        let added = lines.indices.dropLast().filter { lines[$0].hasSuffix("// tutorial:line") }.map {
            lines[$0 + 1].trimmingCharacters(in: .whitespaces)
        }
        #expect(added.count == 2)
        for line in added { #expect(readme.contains("\n" + line + "\n"), "README lacks \(line)") }
    }

    @Test func theAppKnowsTheNewScreensActionWithoutAList() {
        #expect(TutorialApp().knownActions == ["showAbout", "back", "launch"])
        #expect(TutorialApp().screenTypes.map { "\($0)" } == ["HomeScreen", "AboutScreen"])
    }

    @Test(arguments: TestMode.allCases)
    func theNewScreenIsPushedAndGoesBackThroughTheAPI(mode: TestMode) throws {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let server = try ShellServer(
            configuration: configuration, application: TutorialApp(), pagePaths: [],
            chrome: PageChrome(name: "Tutorial"))
        let test = try TestServer(mode, responder: try server.makeResponder())
        let client = test.client()
        #expect(try client.get("/api/state").json["screen"] == "home")
        let about = try client.postJSON("/api/actions", #"{"action": "showAbout"}"#).json
        #expect(about["screen"] == "about")
        #expect(about["stack"] == ["home", "about"])
        #expect(about["actions"] == ["back", "launch"])
        let page = try client.get("/", headers: [("Accept", "text/html")])
        #expect(page.text.contains("data-role=\"back\""))
        let back = try client.postJSON("/api/actions", #"{"action": "back"}"#).json
        #expect(back["stack"] == ["home"])
        #expect(try client.postJSON("/api/actions", #"{"action": "back"}"#).status == 409)
    }

    @Test func aRestartRebuildsTheNewScreenWithItsOwner() throws {
        let app = TutorialApp()
        let live = app.makeApp(defaults: DefaultsStore(), now: 0)
        try live.root.visibleScreen.perform(ScreenAction(name: "showAbout"))
        let snapshot = try #require(ShellSnapshot(json: try JSON(parsing: live.snapshot.serialized)))
        let restored = try #require(app.restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0))
        #expect(restored.root.visibleScreen is AboutScreen)
        #expect(restored.root.navigation?.viewControllers.map(\.name) == ["home", "about"])
        try restored.root.visibleScreen.perform(ScreenAction(name: "back"))
        #expect(restored.root.navigation?.viewControllers.map(\.name) == ["home"])
        try restored.root.visibleScreen.perform(ScreenAction(name: "showAbout"))
        #expect(restored.root.visibleScreen is AboutScreen)
    }
}
