import AppShell
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// The probe app with a route of its own, `/api/probe/screen`: it answers with the session's
/// visible screen and the shell's clock, through `Shell.respond` and its `ShellRequestContext`.
struct RoutedProbeApp: ShellApplication {
    func makeFirstScreen() -> ViewController { ContextProbeScreen() }
    func makeCoordinator(root: RootController) -> ContextProbeCoordinator { ContextProbeCoordinator(root: root) }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }

    func installRoutes(into router: inout Router, shell: Shell) {
        router.get(
            "/api/probe/screen",
            shell.respond { context in
                .text("\(context.app.root.visibleScreen.name) at \(shell.clock())")
            })
    }
}

/// An app adds routes of its own to `ShellServer`'s router, and its tests give the server a clock.
@Suite struct AppRoutesTests {
    static func start(_ mode: TestMode, application: any ShellApplication) throws -> TestServer {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = PageScriptTests.packageRoot.appendingPathComponent("Public").path
        let server = try ShellServer(
            configuration: configuration, application: application, pagePaths: [],
            chrome: PageChrome(name: "Probe"), clock: { 1_234_000 })
        #expect(server.shell.clock() == 1_234_000)
        return try TestServer(mode, responder: try server.makeResponder())
    }

    @Test(arguments: TestMode.allCases) func anAppRouteGetsTheSessionAndTheClock(mode: TestMode) throws {
        let client = try Self.start(mode, application: RoutedProbeApp()).client()
        let answer = try client.get("/api/probe/screen")
        #expect(answer.status == 200)
        #expect(answer.text == "probe at 1234000")
        #expect(answer.headers["Set-Cookie"] != nil)
        // The framework's routes are still there.
        #expect(try client.get("/healthz").status == 200)
    }

    @Test(arguments: TestMode.allCases) func anAppWithoutRoutesHasNone(mode: TestMode) throws {
        let client = try Self.start(mode, application: ContextProbeApp()).client()
        #expect(try client.get("/api/probe/screen").status == 404)
    }
}
