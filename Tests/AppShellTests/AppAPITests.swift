import AppShell
import AppShellConcurrency
import AppShellJSON
import AppShellSessions
import Testing

// A small app for the app API's mechanisms: a shelf app coordinator showing a splash, then a
// stack of shelves pushing books, owned by a `books` flow that presents a cover modally through a
// `cover` flow of its own.

enum ShelfAction: ScreenActions {
    case openBook(id: String)
    static let allCases: [ShelfAction] = [.openBook(id: "")]
}
enum BookAction: String, ScreenActions { case showCover }
enum CoverAction: String, CoordinatedActions {
    case close
    func perform(on owner: CoverCoordinator, _ request: ActionRequest) throws(ActionError) {
        owner.root.dismiss(animated: false) { owner.finish() }
    }
}

final class ShelfSplash: ViewController, RestorableScreen { init() { super.init(name: "shelfSplash") } }
final class ShelfScreen: Screen<ShelfAction>, RestorableScreen { init() { super.init(name: "shelf") } }
final class BookScreen: Screen<BookAction>, RestorableScreen {
    /// The book it shows: chosen when it was pushed, kept across a restart.
    @SceneStorage("id") var bookID = ""
    init() { super.init(name: "book") }
}
final class CoverScreen: Screen<CoverAction>, RestorableScreen { init() { super.init(name: "cover") } }

enum ShelfLaunch: LaunchSources, Equatable {
    case widget
    case link(book: String, page: Int?)
    static let allCases: [ShelfLaunch] = [.widget, .link(book: "", page: nil)]
}

final class ShelfCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    var routed: [String?] = []
    var launches: [ShelfLaunch] = []
    var lateLinks: [String] = []
    override class var shows: [any Restorable.Type] { [ShelfSplash.self, BooksCoordinator.self] }

    init(root: RootController) {
        self.root = root
        super.init(name: "app")
    }

    func startupDidFinish(deepLink: String?) {
        routed.append(deepLink)
        let books = BooksCoordinator(root: root)
        addChild(books)
        root.transition(to: NavigationController(rootViewController: books.own(ShelfScreen())), animated: false)
    }

    func launch(from source: ShelfLaunch, _ request: ActionRequest) throws(ActionError) { launches.append(source) }

    func open(deepLink: String) { lateLinks.append(deepLink) }
}

final class BooksCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "books"
    override class var shows: [any Restorable.Type] { [ShelfScreen.self, BookScreen.self, CoverCoordinator.self] }
    let root: RootController

    init(root: RootController) {
        self.root = root
        super.init(name: Self.restorationIdentifier)
        handle(ShelfAction.self) { [unowned self] action, _ in
            switch action {
            case .openBook(let id):
                let book = BookScreen()
                book.bookID = id
                self.root.navigation?.push(own(book), animated: false)
            }
        }
        handle(BookAction.self) { [unowned self] action, _ in
            switch action {
            case .showCover:
                let cover = CoverCoordinator(root: self.root)
                addChild(cover)
                self.root.present(cover.own(CoverScreen()), animated: false)
            }
        }
    }

    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard root.navigation != nil else { return nil }
        self.init(root: root)
    }
}

final class CoverCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "cover"
    override class var shows: [any Restorable.Type] { [CoverScreen.self] }
    let root: RootController

    init(root: RootController) {
        self.root = root
        super.init(name: Self.restorationIdentifier)
    }

    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard root.presented is CoverScreen else { return nil }
        self.init(root: root)
    }
}

final class StartupRecord: Sendable {
    let runs = Locked(0)
}

struct ShelfApp: ShellApplication {
    let record = StartupRecord()

    func makeFirstScreen() -> ViewController { ShelfSplash() }
    func makeCoordinator(root: RootController) -> ShelfCoordinator { ShelfCoordinator(root: root) }
    var startup: StartupWork? {
        StartupWork(milliseconds: 100) { [record] _ in record.runs.withLock { $0 += 1 } }
    }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { .show }
}

/// The app API: what the framework derives from the coordinators' declarations (known actions,
/// restoration), the start-up work it runs and persists, and typed launch sources.
@Suite struct AppAPITests {
    static func act(_ app: LiveApp, _ name: String, _ parameters: [String: JSON] = [:]) throws {
        try app.root.visibleScreen.perform(ActionRequest(name: name, parameters: parameters))
    }

    static func rebuilt(_ app: LiveApp, by shelf: ShelfApp = ShelfApp()) throws -> LiveApp? {
        let snapshot = try #require(ShellSnapshot(json: try JSON(parsing: app.snapshot.serialized)))
        return shelf.restoreApp(from: snapshot, defaults: DefaultsStore(), now: 1000)
    }

    @Test func theScreensAndActionsComeFromWhatTheCoordinatorsShow() {
        #expect(ShelfApp().screenTypes.map { "\($0)" } == ["ShelfSplash", "ShelfScreen", "BookScreen", "CoverScreen"])
        #expect(ShelfApp().knownActions == ["openBook", "showCover", "close", "launch"])
    }

    @Test func theStartupWorkRunsOnceWhenDueThenTheAppRoutesToTheWaitingLink() throws {
        let shelf = ShelfApp()
        let app = shelf.makeApp(defaults: DefaultsStore(), now: 1000)
        #expect(app.isStarting)
        #expect(app.nextDeadline == 1100)
        app.open(deepLink: "/books/1")
        #expect(app.pendingDeepLink == "/books/1")
        app.advance(now: 1099)
        #expect(shelf.record.runs.withLock { $0 } == 0)
        app.advance(now: 1100)
        app.advance(now: 1200)
        #expect(shelf.record.runs.withLock { $0 } == 1)
        let coordinator = try #require(app.coordinator as? ShelfCoordinator)
        #expect(coordinator.routed == ["/books/1"])
        #expect(!app.isStarting && app.nextDeadline == nil)
        // Once started, a link goes to the app coordinator at once.
        app.open(deepLink: "/late")
        #expect(coordinator.lateLinks == ["/late"])
    }

    @Test func theStartupAndItsLinkComeBackFromTheSnapshot() throws {
        let app = ShelfApp().makeApp(defaults: DefaultsStore(), now: 1000)
        app.open(deepLink: "/books/2")
        let restored = try #require(try Self.rebuilt(app))
        #expect(restored.pendingDeepLink == "/books/2")
        #expect(restored.nextDeadline == 1100)
        restored.advance(now: 1100)
        #expect((restored.coordinator as? ShelfCoordinator)?.routed == ["/books/2"])
    }

    @Test func theTreeComesBackWithEachScreenOwnedByTheFlowThatShowsIt() throws {
        let app = ShelfApp().makeApp(defaults: DefaultsStore(), now: 0)
        app.advance(now: 100)
        try Self.act(app, "openBook", ["id": "moby-dick"])
        try Self.act(app, "showCover")
        let restored = try #require(try Self.rebuilt(app))
        #expect(restored.coordinator.tree == app.coordinator.tree)
        #expect(restored.root.navigation?.viewControllers.map(\.name) == ["shelf", "book"])
        // The book screen's parameter comes back with it.
        #expect((restored.root.navigation?.viewControllers.last as? BookScreen)?.bookID == "moby-dick")
        #expect(restored.root.presented is CoverScreen)
        // The cover's own action finds its flow, which finishes.
        try Self.act(restored, "close")
        #expect(restored.root.presented == nil)
        #expect(restored.coordinator.tree == ["name": "app", "children": [["name": "books", "children": []]]])
        // The stack's screens find the books flow's handlers.
        try Self.act(restored, "showCover")
        #expect(restored.root.presented is CoverScreen)
    }

    @Test func aTreeThatDoesNotFitTheScreensRestoresNothing() throws {
        let app = ShelfApp().makeApp(defaults: DefaultsStore(), now: 0)
        app.advance(now: 100)
        try Self.act(app, "openBook", ["id": "a"])
        var snapshot = app.snapshot
        // A coordinator the app does not have.
        snapshot.coordinators = ["name": "app", "children": [["name": "gone", "children": []]]]
        #expect(ShelfApp().restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0) == nil)
        // A flow that refuses what was restored (no modal screen for `cover`).
        snapshot.coordinators = [
            "name": "app", "children": [["name": "books", "children": [["name": "cover", "children": []]]]],
        ]
        #expect(ShelfApp().restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0) == nil)
        // A screen no coordinator of the tree shows.
        snapshot.coordinators = ["name": "app", "children": []]
        #expect(ShelfApp().restoreApp(from: snapshot, defaults: DefaultsStore(), now: 0) == nil)
    }

    @Test func launchSourcesAreTyped() throws {
        let app = ShelfApp().makeApp(defaults: DefaultsStore(), now: 0)
        let coordinator = try #require(app.coordinator as? ShelfCoordinator)
        try coordinator.launch(ActionRequest(name: "launch", parameters: ["source": "widget"]))
        try coordinator.launch(
            ActionRequest(name: "launch", parameters: ["source": "link", "book": "moby", "page": 3]))
        try coordinator.launch(ActionRequest(name: "launch", parameters: ["source": "link", "book": "moby"]))
        #expect(coordinator.launches == [.widget, .link(book: "moby", page: 3), .link(book: "moby", page: nil)])
        #expect(throws: ActionError(status: 400, #"launch needs "source": "widget" or "link""#)) {
            try coordinator.launch(ActionRequest(name: "launch", parameters: ["source": "mail"]))
        }
        #expect(throws: ActionError(status: 400, #"launch from link needs "book" (a string)"#)) {
            try coordinator.launch(ActionRequest(name: "launch", parameters: ["source": "link"]))
        }
        #expect(throws: ActionError(status: 400, #"launch from "page" of link must be an integer, not "x""#)) {
            try coordinator.launch(
                ActionRequest(name: "launch", parameters: ["source": "link", "book": "a", "page": "x"]))
        }
        #expect(coordinator.launches.count == 3)
    }

    /// The catalogue's `launch`: its `source` with the app's sources as choices, and each source's
    /// parameters, none required (each source needs its own).
    @Test func theLaunchIsDescribedFromTheAppsSources() {
        #expect(
            ShelfApp().launchDescription
                == ActionDescription(
                    name: "launch",
                    parameters: [
                        ActionParameter(name: "source", type: .string, choices: ["widget", "link"]),
                        ActionParameter(name: "book", type: .string, isRequired: false),
                        ActionParameter(name: "page", type: .integer, isRequired: false),
                    ]))
        #expect(ShelfApp().launchParameters(of: "link") == ["book", "page"])
        #expect(ShelfApp().launchParameters(of: "widget").isEmpty)
        #expect(ShelfApp().actionCatalog.last == ShelfApp().launchDescription)
    }
}
