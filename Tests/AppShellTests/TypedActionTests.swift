import AppShell
import AppShellJSON
import AppShellSessions
import Testing

/// A note screen's actions, for the tests: one with a parameter, one with a role.
enum NoteAction: ScreenActions {
    case save(text: String)
    case close

    static let allCases: [NoteAction] = [.save(text: ""), .close]

    var role: ActionRole? {
        if case .close = self { return .close }
        return nil
    }
}

final class NoteScreen: Screen<NoteAction> {
    init() { super.init(name: "note") }
    override func renderHTML() -> String { form(.save(text: "draft"), label: "Save") + form(.close, label: "Close") }
}

/// Handles the note's actions, recording them.
final class NoteCoordinator: Coordinator {
    var handled: [NoteAction] = []

    init(screen: NoteScreen) {
        super.init(name: "note")
        screen.handle(by: self) { coordinator, action, _ in coordinator.handled.append(action) }
    }
}

extension NoteAction: Equatable {}

/// How a habit is tracked: a `String`-backed enum as a parameter.
enum Cadence: String, Codable, CaseIterable, Sendable { case daily, weekly }

/// Every kind of parameter an action can take.
enum HabitAction: ScreenActions, Equatable {
    case open(id: Int)
    case save(title: String, goal: Double, cadence: Cadence, reminder: Bool, note: String?)
    case archive

    static let allCases: [HabitAction] = [
        .open(id: 0), .save(title: "", goal: 0, cadence: .daily, reminder: false, note: nil), .archive,
    ]
}

/// `Screen<Action>`: what it offers and renders comes from its enum, and its coordinator gets the
/// actions typed, their parameters decoded from JSON or a form's text.
@Suite struct TypedActionTests {
    @Test func aScreenOffersEveryCaseAndDescribesThem() {
        #expect(NoteScreen().actions == ["save", "close"])
        #expect(
            NoteScreen.offeredActions == [
                ActionDescription(name: "save", parameters: [ActionParameter(name: "text", type: .string)]),
                ActionDescription(name: "close", role: .close),
            ])
    }

    @Test func theCatalogueNamesEachParameterWithItsTypeAndWhetherItIsRequired() {
        #expect(
            HabitAction.descriptions == [
                ActionDescription(name: "open", parameters: [ActionParameter(name: "id", type: .integer)]),
                ActionDescription(
                    name: "save",
                    parameters: [
                        ActionParameter(name: "title", type: .string),
                        ActionParameter(name: "goal", type: .number),
                        ActionParameter(name: "cadence", type: .string, choices: ["daily", "weekly"]),
                        ActionParameter(name: "reminder", type: .boolean),
                        ActionParameter(name: "note", type: .string, isRequired: false),
                    ]),
                ActionDescription(name: "archive"),
            ])
        #expect(HabitAction.descriptions[1].requiredParameters == ["title", "goal", "cadence", "reminder"])
    }

    @Test func parametersAreDecodedFromJSONValues() throws {
        let open = try HabitAction(decoding: ActionRequest(name: "open", parameters: ["id": 7]))
        #expect(open == .open(id: 7))
        let save = try HabitAction(
            decoding: ActionRequest(
                name: "save",
                parameters: ["title": "Run", "goal": 2.5, "cadence": "weekly", "reminder": true, "note": "at 7"]))
        #expect(save == .save(title: "Run", goal: 2.5, cadence: .weekly, reminder: true, note: "at 7"))
        // A whole number is a number; an optional parameter may be left out or null.
        let whole = try HabitAction(
            decoding: ActionRequest(
                name: "save", parameters: ["title": "Run", "goal": 3, "cadence": "daily", "reminder": false]))
        #expect(whole == .save(title: "Run", goal: 3, cadence: .daily, reminder: false, note: nil))
        let null = try HabitAction(
            decoding: ActionRequest(
                name: "save",
                parameters: ["title": "Run", "goal": 3, "cadence": "daily", "reminder": false, "note": .null]))
        #expect(null == whole)
    }

    @Test func parametersAreDecodedFromAFormsText() throws {
        let open = try HabitAction(decoding: ActionRequest(name: "open", parameters: ["id": "12"]))
        #expect(open == .open(id: 12))
        let save = try HabitAction(
            decoding: ActionRequest(
                name: "save",
                parameters: ["title": "Read", "goal": "0.5", "cadence": "daily", "reminder": "on", "note": ""]))
        #expect(save == .save(title: "Read", goal: 0.5, cadence: .daily, reminder: true, note: nil))
    }

    @Test func aMissingOrMistypedParameterIs400NamingItAndTheTypeItNeeds() {
        func refusal(_ name: String, _ parameters: [String: JSON]) -> ActionError? {
            do {
                _ = try HabitAction(decoding: ActionRequest(name: name, parameters: parameters))
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal("open", [:]) == ActionError(status: 400, "open needs \"id\" (an integer)"))
        #expect(
            refusal("open", ["id": "one"]) == ActionError(status: 400, "\"id\" of open must be an integer, not \"one\"")
        )
        #expect(refusal("open", ["id": 1.5]) == ActionError(status: 400, "\"id\" of open must be an integer, not 1.5"))
        #expect(
            refusal("open", ["id": true]) == ActionError(status: 400, "\"id\" of open must be an integer, not true"))
        let valid: [String: JSON] = ["title": "Run", "goal": 1, "cadence": "daily", "reminder": true]
        var wrong = valid
        wrong["title"] = 5
        #expect(refusal("save", wrong) == ActionError(status: 400, "\"title\" of save must be a string, not 5"))
        wrong = valid
        wrong["cadence"] = "hourly"
        #expect(
            refusal("save", wrong)
                == ActionError(status: 400, "\"cadence\" of save must be one of \"daily\", \"weekly\", not \"hourly\""))
        wrong = valid
        wrong["reminder"] = "maybe"
        #expect(
            refusal("save", wrong)
                == ActionError(status: 400, "\"reminder\" of save must be true or false, not \"maybe\""))
        wrong = valid
        wrong["goal"] = ["a": 1]
        #expect(refusal("save", wrong)?.status == 400)
        wrong = valid
        wrong.removeValue(forKey: "goal")
        #expect(refusal("save", wrong) == ActionError(status: 400, "save needs \"goal\" (a number)"))
        #expect(refusal("fly", [:]) == ActionError(status: 409, "there is no action \"fly\" here"))
    }

    @Test func anActionIsSentAsItsNameAndParameters() {
        let sent = HabitAction.save(title: "Run", goal: 2, cadence: .weekly, reminder: true, note: nil).actionRequest
        #expect(sent.name == "save")
        #expect(sent.parameters == ["title": "Run", "goal": 2.0, "cadence": "weekly", "reminder": true])
        #expect(HabitAction.archive.actionRequest.name == "archive")
        #expect(HabitAction.archive.actionRequest.parameters.isEmpty)
    }

    @Test func theCoordinatorGetsTheActionTypedWithItsParameters() throws {
        let screen = NoteScreen()
        let coordinator = NoteCoordinator(screen: screen)
        try screen.perform(ActionRequest(name: "save", parameters: ["text": "hello"]))
        try screen.perform(ActionRequest(name: "close"))
        #expect(coordinator.handled == [.save(text: "hello"), .close])
        #expect(screen.coordinator === coordinator)
    }

    @Test func aMissingParameterIs400AndAnotherNameIs409() {
        let screen = NoteScreen()
        let coordinator = NoteCoordinator(screen: screen)
        #expect(throws: ActionError(status: 400, "save needs \"text\" (a string)")) {
            try screen.perform(ActionRequest(name: "save"))
        }
        #expect(throws: ActionError(status: 400, "\"text\" of save must be a string, not 3")) {
            try screen.perform(ActionRequest(name: "save", parameters: ["text": 3]))
        }
        #expect(throws: ActionError(status: 409, "the note screen does not offer \"pop\"")) {
            try screen.perform(ActionRequest(name: "pop"))
        }
        #expect(coordinator.handled.isEmpty)
    }

    @Test func aScreenWhoseCoordinatorIsGoneRefuses() {
        let screen = NoteScreen()
        _ = NoteCoordinator(screen: screen)
        #expect(throws: ActionError.self) { try screen.perform(ActionRequest(name: "close")) }
        #expect(screen.coordinator == nil)
    }

    @Test func theFormsCarryTheActionItsParametersAndItsRole() {
        let screen = NoteScreen()
        let root = RootController(initial: screen, defaults: DefaultsStore())
        let html = withExtendedLifetime(root) { screen.renderHTML() }
        #expect(html.contains("<form method=\"post\" action=\"/actions\" data-action=\"save\">"))
        #expect(html.contains("<input type=\"hidden\" name=\"text\" value=\"draft\">"))
        #expect(html.contains("<form method=\"post\" action=\"/actions\" data-action=\"close\" data-role=\"close\">"))
    }
}
