import AppShell

/// The app the README's tutorial adds a screen to: a home screen in a navigation stack, and the
/// app coordinator that owns it. The line marked `tutorial:line` is the one the tutorial adds.
struct TutorialApp: ShellApplication {
    func makeFirstScreen() -> ViewController { NavigationController(rootViewController: HomeScreen()) }

    func makeCoordinator(root: RootController) -> TutorialCoordinator { TutorialCoordinator(root: root) }

    func url(of app: LiveApp) -> String { "/" }

    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// The first screen: it offers no action of its own yet.
final class HomeScreen: ViewController, RestorableScreen {
    init() { super.init(name: "home") }

    override func renderHTML() -> String { "<h1>Home</h1>" }
}

/// The app coordinator: it owns the stack and declares what its screens show.
final class TutorialCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController

    override class var shows: [any Restorable.Type] {
        [
            HomeScreen.self,
            Route.push(AboutScreen.self, from: HomeScreen.self),  // tutorial:line
        ]
    }

    init(root: RootController) {
        self.root = root
        super.init(name: "app")
    }
}
