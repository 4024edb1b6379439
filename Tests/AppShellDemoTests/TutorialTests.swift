import AppShell
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The README's screen in code — a new screen with one action in one new file, plus the one line where
/// its coordinator declares how it is shown (a `Route`) — is code of this test target
/// (`Tutorial/`), so it compiles; the README must quote it as it is, and the screen works through
/// the JSON API, the HTML form and a restart, with no edit to the framework, to `app.js`, to home
/// or to a list of names.
@Suite struct TutorialTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: CommandTests.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    static let screenFile = "Tests/AppShellDemoTests/Tutorial/AboutScreen.swift"
    static let appFile = "Tests/AppShellDemoTests/Tutorial/TutorialApp.swift"

    @Test func theReadmeQuotesTheNewScreensFileAndTheOneLineThatShowsIt() throws {
        let readme = try Self.read("README.md")
        let screen = try Self.read(Self.screenFile)
        #expect(screen.split(separator: "\n", omittingEmptySubsequences: false).count - 1 <= 40)
        #expect(readme.contains("```swift\n" + screen + "```"))
        // The coordinator gains one line, marked `// tutorial:line`; the README quotes it (without
        // the marker), and nothing else in the app names the new screen.
        let app = try Self.read(Self.appFile)
        let added = app.components(separatedBy: "\n").filter { $0.hasSuffix("// tutorial:line") }.map {
            $0.replacingOccurrences(of: "// tutorial:line", with: "").trimmingCharacters(in: .whitespaces)
        }
        #expect(added == ["Route.push(AboutScreen.self, from: HomeScreen.self),"])
        for line in added { #expect(readme.contains("\n" + line + "\n"), "README lacks \(line)") }
        #expect(app.components(separatedBy: "AboutScreen").count - 1 == 1)
        #expect(app.components(separatedBy: "about").count - 1 == 0)
    }

    @Test func theAppKnowsTheNewScreensActionWithoutAList() {
        #expect(TutorialApp().knownActions == ["back", "launch", "show"])
        #expect(TutorialApp().screenTypes.map { "\($0)" } == ["HomeScreen", "AboutScreen"])
    }

    static func start(_ mode: TestMode) throws -> TestServer {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let server = try ShellServer(
            configuration: configuration, application: TutorialApp(), pagePaths: [],
            chrome: PageChrome(name: "Tutorial"))
        return try TestServer(mode, responder: try server.makeResponder())
    }

    @Test(arguments: TestMode.allCases)
    func theNewScreenIsPushedAndGoesBackThroughTheAPI(mode: TestMode) throws {
        let test = try Self.start(mode)
        let client = test.client()
        let home = try client.get("/api/state").json
        #expect(home["screen"] == "home")
        #expect(home["actions"] == ["launch", "show"])
        let unknown = try client.postJSON("/api/actions", #"{"action": "show", "screen": "nowhere"}"#)
        #expect(unknown.status == 400)
        #expect(try client.postJSON("/api/actions", #"{"action": "show"}"#).status == 400)
        let about = try client.postJSON("/api/actions", #"{"action": "show", "screen": "about"}"#).json
        #expect(about["screen"] == "about")
        #expect(about["stack"] == ["home", "about"])
        #expect(about["actions"] == ["back", "launch"])
        #expect(about["lifecycle"]?.arrayValue?.last == ["event": "completion", "transition": "push"])
        let again = try client.postJSON("/api/actions", #"{"action": "show", "screen": "about"}"#)
        #expect(again.status == 409)
        #expect(again.json["stack"] == ["home", "about"])
        let page = try client.get("/", headers: [("Accept", "text/html")])
        #expect(page.text.contains("data-role=\"back\""))
        #expect(!page.text.contains("data-action=\"show\""))
        let back = try client.postJSON("/api/actions", #"{"action": "back"}"#).json
        #expect(back["stack"] == ["home"])
        #expect(try client.postJSON("/api/actions", #"{"action": "back"}"#).status == 409)
    }

    /// Home shows a button for the route without a line of its own: a form that posts `show`
    /// with `screen=about` to `/actions`, which works without JavaScript.
    @Test(arguments: TestMode.allCases)
    func homeOffersTheRouteAsAFormThatWorksWithoutJavaScript(mode: TestMode) throws {
        let test = try Self.start(mode)
        let client = test.client()
        let page = try PageTests.html(client, "/").text
        #expect(page.contains("<nav class=\"routes\" aria-label=\"Go to\">"))
        #expect(page.contains("data-action=\"show\""))
        #expect(page.contains("<input type=\"hidden\" name=\"screen\" value=\"about\">"))
        #expect(page.contains("<button type=\"submit\">About</button>"))
        let shown = try client.submit("show", on: "/", ["screen": "about"])
        #expect(shown.status == 303)
        #expect(try client.get("/api/state").json["stack"] == ["home", "about"])
        let token = try PageTests.token(page)
        let unknown = try client.postForm(
            "/actions", "csrf=\(token)&action=show&screen=nowhere", headers: [("Accept", "text/html")])
        #expect(unknown.status == 400)
        #expect(try client.get("/api/state").json["stack"] == ["home", "about"])
    }

    /// The route's push is the imperative one: the same lifecycle calls in the same order
    /// (`NavigationController.push`'s), and the new screen owned by the coordinator that declares the route.
    @Test func theRoutePushesAsTheImperativeWayDoes() throws {
        let app = TutorialApp()
        let routed = app.makeApp(defaults: DefaultsStore(), now: 0)
        try routed.show(ActionRequest(name: "show", parameters: ["screen": "about"]))
        let imperative = app.makeApp(defaults: DefaultsStore(), now: 0)
        imperative.root.navigation?.push(imperative.coordinator.own(AboutScreen()))
        #expect(routed.root.log.json == imperative.root.log.json)
        #expect(routed.root.log.json.contains(["screen": "about", "event": "viewDidAppear"]))
        let about = try #require(routed.root.visibleScreen as? AboutScreen)
        #expect(about.coordinator === routed.coordinator)
    }

    @Test func aRestartRebuildsTheNewScreenWithItsOwner() throws {
        let app = TutorialApp()
        let live = app.makeApp(defaults: DefaultsStore(), now: 0)
        try live.show(ActionRequest(name: "show", parameters: ["screen": "about"]))
        let snapshot = try #require(ShellSnapshot(json: try JSON(parsing: live.snapshot.serialized)))
        let restored = try #require(app.restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0))
        #expect(restored.root.visibleScreen is AboutScreen)
        #expect(restored.root.navigation?.viewControllers.map(\.name) == ["home", "about"])
        try restored.root.visibleScreen.perform(ActionRequest(name: "back"))
        #expect(restored.root.navigation?.viewControllers.map(\.name) == ["home"])
        try restored.show(ActionRequest(name: "show", parameters: ["screen": "about"]))
        #expect(restored.root.visibleScreen is AboutScreen)
    }
}
