import AppShell
import AppShellJSON
import AppShellSessions
import Testing

/// A note screen's actions, for the tests: one with a parameter, one with a role.
enum NoteAction: String, ScreenActions {
    case save, close

    var requiredParameters: [String] { self == .save ? ["text"] : [] }
    var role: ActionRole? { self == .close ? .close : nil }
}

final class NoteScreen: Screen<NoteAction> {
    init() { super.init(name: "note") }
    override func renderHTML() -> String { form(.save, label: "Save") + form(.close, label: "Close") }
}

/// Handles the note's actions, recording them.
final class NoteCoordinator: Coordinator {
    var handled: [(NoteAction, String?)] = []

    init(screen: NoteScreen) {
        super.init(name: "note")
        screen.handle(by: self) { coordinator, action, request in
            switch action {
            case .save: coordinator.handled.append((.save, request.string("text")))
            case .close: coordinator.handled.append((.close, nil))
            }
        }
    }
}

/// `Screen<Action>`: what it offers and renders comes from its enum, and its coordinator gets the
/// actions typed.
@Suite struct TypedActionTests {
    @Test func aScreenOffersEveryCaseAndDescribesThem() {
        #expect(NoteScreen().actions == ["save", "close"])
        #expect(
            NoteScreen.offeredActions == [
                ActionDescription(name: "save", requiredParameters: ["text"]),
                ActionDescription(name: "close", role: .close),
            ])
    }

    @Test func theCoordinatorGetsTheActionTypedWithItsParameters() throws {
        let screen = NoteScreen()
        let coordinator = NoteCoordinator(screen: screen)
        try screen.perform(ScreenAction(name: "save", parameters: ["text": "hello"]))
        try screen.perform(ScreenAction(name: "close"))
        #expect(coordinator.handled.map(\.0) == [.save, .close])
        #expect(coordinator.handled.first?.1 == "hello")
        #expect(screen.coordinator === coordinator)
    }

    @Test func aMissingParameterIs400AndAnotherNameIs409() {
        let screen = NoteScreen()
        let coordinator = NoteCoordinator(screen: screen)
        #expect(throws: ActionError(status: 400, "save needs \"text\" strings")) {
            try screen.perform(ScreenAction(name: "save"))
        }
        #expect(throws: ActionError(status: 409, "the note screen does not offer \"pop\"")) {
            try screen.perform(ScreenAction(name: "pop"))
        }
        #expect(coordinator.handled.isEmpty)
    }

    @Test func aScreenWhoseCoordinatorIsGoneRefuses() {
        let screen = NoteScreen()
        _ = NoteCoordinator(screen: screen)
        #expect(throws: ActionError.self) { try screen.perform(ScreenAction(name: "close")) }
        #expect(screen.coordinator == nil)
    }

    @Test func theFormsCarryTheActionAndItsRole() {
        let screen = NoteScreen()
        let root = RootController(initial: screen, defaults: DefaultsStore())
        let html = withExtendedLifetime(root) { screen.renderHTML() }
        #expect(html.contains("<form method=\"post\" action=\"/actions\" data-action=\"save\">"))
        #expect(html.contains("<form method=\"post\" action=\"/actions\" data-action=\"close\" data-role=\"close\">"))
    }
}
