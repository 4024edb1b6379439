import AppShell
import AppShellJSON
import AppShellSessions
import Testing

// A small app for routes: a desk screen (a plain `ViewController`, owned by no coordinator) that
// presents a note sheet through a route its app coordinator declares.

enum NoteSheetAction: String, CoordinatedActions {
    case close
    func perform(on owner: DeskCoordinator, _ request: ActionRequest) throws(ActionError) {
        owner.root.dismiss(animated: false)
    }
}

final class DeskScreen: ViewController, RestorableScreen { init() { super.init(name: "desk") } }
final class NoteSheet: Screen<NoteSheetAction>, RestorableScreen {
    init() { super.init(name: "note") }
    override var title: String { "New note" }
}

final class DeskCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] {
        [DeskScreen.self, Route.present(NoteSheet.self, from: DeskScreen.self)]
    }

    init(root: RootController) {
        self.root = root
        super.init(name: "app")
    }
}

struct DeskApp: ShellApplication {
    func makeFirstScreen() -> ViewController { DeskScreen() }
    func makeCoordinator(root: RootController) -> DeskCoordinator { DeskCoordinator(root: root) }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { .show }
}

/// Routes (`Route.present`): declared in one line, shown by the framework's `show` action.
@Suite struct RouteTests {
    static func show(_ screen: String) -> ActionRequest {
        ActionRequest(name: "show", parameters: ["screen": .string(screen)])
    }

    @Test func theRoutesScreenIsKnownAndShowIsAnAction() {
        #expect(DeskApp().screenTypes.map { "\($0)" } == ["DeskScreen", "NoteSheet"])
        #expect(DeskApp().knownActions == ["close", "launch", "show"])
        #expect(DeskApp().actionCatalog.last == ActionDescription.show)
    }

    @Test func aPresentRouteIsTheImperativePresentOwnedByItsCoordinator() throws {
        let routed = DeskApp().makeApp(defaults: DefaultsStore(), now: 0)
        #expect(routed.state(defaults: DefaultsStore())["actions"] == ["launch", "show"])
        try routed.show(Self.show("note"))
        let imperative = DeskApp().makeApp(defaults: DefaultsStore(), now: 0)
        imperative.root.present(imperative.coordinator.own(NoteSheet()))
        #expect(routed.root.log.json == imperative.root.log.json)
        #expect(routed.root.presented?.name == "note")
        let sheet = try #require(routed.root.presented as? NoteSheet)
        #expect(sheet.coordinator === routed.coordinator)
        #expect(routed.state(defaults: DefaultsStore())["actions"] == ["close", "launch"])
        try sheet.perform(ActionRequest(name: "close"))
        #expect(routed.root.presented == nil)
    }

    @Test func anUnknownScreenIs400AndARouteTheVisibleScreenLacksIs409() throws {
        let app = DeskApp().makeApp(defaults: DefaultsStore(), now: 0)
        #expect(throws: ActionError.self) { try app.show(Self.show("desk")) }
        do {
            try app.show(Self.show("nowhere"))
            Issue.record("an unknown screen was shown")
        } catch { #expect(error.status == 400) }
        do {
            try app.show(ActionRequest(name: "show"))
            Issue.record("show without a screen was accepted")
        } catch { #expect(error.status == 400) }
        try app.show(Self.show("note"))
        do {
            try app.show(Self.show("note"))
            Issue.record("the sheet was presented over itself")
        } catch { #expect(error.status == 409) }
        #expect(app.root.log.json.filter { $0 == ["screen": "note", "event": "viewDidLoad"] }.count == 1)
    }

    @Test func aRestartRebuildsThePresentedScreenWithItsOwner() throws {
        let app = DeskApp().makeApp(defaults: DefaultsStore(), now: 0)
        try app.show(Self.show("note"))
        let snapshot = try #require(ShellSnapshot(json: try JSON(parsing: app.snapshot.serialized)))
        let restored = try #require(DeskApp().restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0))
        let sheet = try #require(restored.root.presented as? NoteSheet)
        #expect(sheet.coordinator === restored.coordinator)
        try sheet.perform(ActionRequest(name: "close"))
        #expect(restored.root.presented == nil)
        try restored.show(Self.show("note"))
        #expect(restored.root.presented is NoteSheet)
    }
}
