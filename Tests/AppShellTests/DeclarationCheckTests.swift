import AppShell
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

// Apps whose coordinators declare something wrong, each mistake once.

enum StrayAction: String, ScreenActions {
    /// Presents a sheet its coordinator does not declare.
    case stray
    /// Changes the version.
    case touch
}
enum StraySheetAction: String, ScreenActions { case close }

final class StrayHomeScreen: Screen<StrayAction>, RestorableScreen {
    init() { super.init(name: "home") }
    override func renderHTML() -> String { form(.stray, label: "Stray") + form(.touch, label: "Touch") }
}
final class StraySheet: Screen<StraySheetAction>, RestorableScreen { init() { super.init(name: "sheet") } }
final class OtherHomeScreen: ViewController, RestorableScreen { init() { super.init(name: "home") } }
final class NeitherScreenNorCoordinator: Restorable {}

/// Shows the home screen, and — a mistake found only at run time — presents an undeclared sheet.
class DeclaringCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] { [StrayHomeScreen.self] }

    required init(root: RootController) {
        self.root = root
        super.init(name: "app")
        handle(StrayAction.self) { [unowned self] action, _ in
            switch action {
            case .stray: self.root.present(self.own(StraySheet()), animated: false)
            case .touch: self.root.noteChange()
            }
        }
    }
}
final class RouteFromNowhereCoordinator: DeclaringCoordinator {
    override class var shows: [any Restorable.Type] {
        [StrayHomeScreen.self, Route.present(OtherSheet.self, from: StraySheet.self)]
    }
}
final class OtherSheet: ViewController, RestorableScreen { init() { super.init(name: "other") } }
final class SameNameCoordinator: DeclaringCoordinator {
    override class var shows: [any Restorable.Type] { [StrayHomeScreen.self, OtherHomeScreen.self] }
}
final class NeitherCoordinator: DeclaringCoordinator {
    override class var shows: [any Restorable.Type] { [StrayHomeScreen.self, NeitherScreenNorCoordinator.self] }
}

struct DeclaringApp<Root: DeclaringCoordinator>: ShellApplication {
    var first: @Sendable () -> ViewController = { StrayHomeScreen() }
    func makeFirstScreen() -> ViewController { first() }
    func makeCoordinator(root: RootController) -> Root { Root(root: root) }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// What the coordinators declare is checked when the server is built, and a screen shown with an
/// owner that does not declare it fails its request instead of the process.
@Suite struct DeclarationCheckTests {
    static func server(_ application: any ShellApplication) throws -> ShellServer {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = PageScriptTests.packageRoot.appendingPathComponent("Public").path
        return try ShellServer(
            configuration: configuration, application: application, pagePaths: [], chrome: PageChrome(name: "Stray"))
    }

    @Test func eachMistakeTheTypesShowStopsTheStartWithOneLineNamingIt() {
        let mistakes: [(any ShellApplication, String)] = [
            (
                DeclaringApp<DeclaringCoordinator>(first: { StraySheet() }),
                "DeclaringCoordinator shows StraySheet (\"sheet\") first but does not declare it in `shows`"
            ),
            (
                DeclaringApp<RouteFromNowhereCoordinator>(),
                "RouteFromNowhereCoordinator's route to OtherSheet is offered on StraySheet, which neither "
                    + "RouteFromNowhereCoordinator nor a coordinator it shows declares in `shows`"
            ),
            (
                DeclaringApp<SameNameCoordinator>(),
                "StrayHomeScreen and OtherHomeScreen are both named \"home\": a restart could not tell them apart"
            ),
            (
                DeclaringApp<NeitherCoordinator>(),
                "NeitherCoordinator declares NeitherScreenNorCoordinator in `shows`, which is no RestorableScreen, "
                    + "RestorableCoordinator or Route: a restart could not make it again"
            ),
        ]
        for (application, message) in mistakes {
            #expect(throws: DeclarationError(message)) { try application.checkDeclarations() }
            #expect(throws: DeclarationError(message)) { try Self.server(application) }
        }
        #expect(throws: Never.self) { try DeclaringApp<DeclaringCoordinator>().checkDeclarations() }
        #expect(throws: Never.self) { try RoutedProbeApp().checkDeclarations() }
    }

    /// `ShellCommand.run` (on a thread of its own: it blocks the termination signals of its
    /// thread) exits 2 for a declaration, as for a bad configuration, and 1 for another failure.
    @Test func theCommandExitsTwoForADeclarationMistake() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("declared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json").path
        try Data("{\"store\": \"memory\"}".utf8).write(to: URL(fileURLWithPath: config))
        func run(_ makeServer: @escaping @Sendable (ShellConfiguration) throws -> ShellServer) -> Int32 {
            let status = Locked<Int32>(-1)
            let done = DispatchSemaphore(value: 0)
            Thread {
                status.withLock {
                    $0 = ShellCommand.run(
                        ShellConfiguration.self, arguments: ["probe", "--config", config], environment: [:],
                        makeServer: makeServer)
                }
                done.signal()
            }.start()
            done.wait()
            return status.withLock { $0 }
        }
        #expect(run { _ in try Self.server(DeclaringApp<SameNameCoordinator>()) } == 2)
        #expect(run { _ in throw StoreError("no store") } == 1)
    }

    /// Fails on the code before (an `assert` in `own(_:)` ended the test process): the action that
    /// shows an undeclared screen answers 500 and changes nothing; the session goes on.
    @Test(arguments: TestMode.allCases) func anUndeclaredScreenShownFailsItsRequestOnly(mode: TestMode) throws {
        let server = try Self.server(DeclaringApp<DeclaringCoordinator>())
        let client = try TestServer(mode, responder: try server.makeResponder()).client()
        let before = try client.state()
        #expect(before["screen"] == "home")
        let stray = try client.act("stray", [:])
        #expect(stray.status == 500)
        let after = try client.state()
        #expect(after["presented"] == .null)
        #expect(after["version"] == before["version"])
        // As a form too: the page's form leads to a 500, not to a page with the sheet.
        #expect(try client.submit("stray", on: "/").status == 500)
        #expect(try client.state()["presented"] == .null)
        // The session goes on.
        let touched = try client.act("touch", [:])
        #expect(touched.status == 200)
        #expect(touched.json["version"] != before["version"])
    }
}
