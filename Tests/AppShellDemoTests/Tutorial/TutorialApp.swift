import AppShell

/// The app the README's tutorial adds a screen to: a home screen in a navigation stack, and the
/// app coordinator that owns it. The lines marked `tutorial:line` are the ones the tutorial adds.
struct TutorialApp: ShellApplication {
    func makeFirstScreen() -> any ScreenController { NavigationController(rootViewController: HomeScreen()) }

    func makeCoordinator(root: RootController) -> TutorialCoordinator { TutorialCoordinator(root: root) }

    func url(of shell: LiveApp) -> String { "/" }

    func open(path: String, next: String?, in shell: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// What home offers.
enum HomeAction: String, ScreenActions {
    /// Shows what the app is.
    case showAbout
}

/// The first screen.
final class HomeScreen: Screen<HomeAction>, RestorableScreen {
    init() { super.init(name: "home") }

    override func renderHTML() -> String { "<h1>Home</h1>\n" + form(.showAbout, label: "About") }
}

/// The app coordinator: it owns the stack and decides what home's actions show.
final class TutorialCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController

    override class var shows: [any Restorable.Type] {
        [
            HomeScreen.self,
            // tutorial:line
            AboutScreen.self,
        ]
    }

    init(root: RootController) {
        self.root = root
        super.init(name: "app")
        handle(HomeAction.self) { [unowned self] action, _ in
            switch action {
            // tutorial:line
            case .showAbout: root.navigation?.push(own(AboutScreen()))
            }
        }
    }
}
