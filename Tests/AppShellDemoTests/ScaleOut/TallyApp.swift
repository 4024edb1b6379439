import AppShell

/// What the tally screen offers: log in (no password: the test app is not about the login flow),
/// add an item to the user's store, and the framework's account screen (log out everywhere).
enum TallyAction: ScreenActions {
    /// Logs the session in as `name` (`root.logIn(as:)`, as the login flow does).
    case logIn(name: String)
    /// Adds `item` to the user's list and counts it (a read-modify-write of the user's store).
    case add(item: String)
    /// Presents the framework's account screen.
    case account

    static let allCases: [TallyAction] = [.logIn(name: "ann"), .add(item: "one"), .account]

    var role: ActionRole? {
        if case .logIn = self { return .rotatesSession }
        return nil
    }
}

/// The one screen of the test app: the logged-in user's items and their count, both kept in the
/// user's store (`@UserStorage`), so shared by every session of the user on every instance.
final class TallyScreen: Screen<TallyAction>, RestorableScreen, View {
    @UserStorage("count") var count = 0
    @UserStorage("items") var items: [String] = []

    init() { super.init(name: "tally") }

    var body: some View {
        Text("\(count) items: \(items.joined(separator: ", "))")
        Button("Add", action: TallyAction.add(item: "more"))
            .navigationTitle("Tally")
    }
}

/// A test app whose state lives in the user's store: a user-store scale-out test drives it on
/// several instances sharing one Redis (the demo app keeps nothing in the user's store).
struct TallyApp: ShellApplication {
    func makeFirstScreen() -> ViewController { TallyScreen() }

    func makeCoordinator(root: RootController) -> TallyCoordinator { TallyCoordinator(root: root) }

    func url(of app: LiveApp) -> String { "/" }

    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// The tally app's coordinator: handles the screen's actions.
final class TallyCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController

    override class var shows: [any Restorable.Type] { [TallyScreen.self, AccountCoordinator.self] }

    init(root: RootController) {
        self.root = root
        super.init(name: "app")
        handle(TallyAction.self) { [unowned self] action, _ throws(ActionError) in try perform(action) }
    }

    private func perform(_ action: TallyAction) throws(ActionError) {
        switch action {
        case .logIn(let name):
            root.logIn(as: name)
        case .add(let item):
            guard root.userDefaults != nil, let screen = root.visibleScreen as? TallyScreen else {
                throw ActionError(status: 409, "log in first")
            }
            screen.items.append(item)
            screen.count += 1
        case .account:
            let account = AccountCoordinator(root: root)
            addChild(account)
            account.start()
        }
    }
}
