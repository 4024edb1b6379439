import AppShell

/// The logged-in flow: owns the navigation stack (main, list) and starts the second screen's
/// coordinator.
final class MainCoordinator: Coordinator {
    private let root: RootController
    private let navigation: NavigationController
    /// Called when the user logs out.
    var onLogout: () -> Void = {}
    /// How long after `remind` the notification comes.
    var reminderDelayMilliseconds: Int64 = 5000

    /// A logged-in flow on `root`, with a new stack or (restoring) the one already shown.
    init(
        root: RootController, navigation: NavigationController = NavigationController(rootViewController: MainScreen())
    ) {
        self.root = root
        self.navigation = navigation
        super.init(name: "main")
        for screen in navigation.viewControllers {
            if let main = screen as? MainScreen {
                main.handle(by: self) { coordinator, action, _ in coordinator.handle(action) }
            }
            if let list = screen as? ListScreen { wire(list) }
        }
    }

    private var main: MainScreen? { navigation.viewControllers.first as? MainScreen }

    /// Shows main inside its navigation controller with a cross-dissolve.
    override func start() {
        root.transition(to: navigation, animated: true)
    }

    /// Pushes the list if the app was launched from a notification and main is showing now.
    func consumeLaunchFlagIfVisible() {
        if let main, root.visibleScreen === main { main.consumeLaunchFlag() }
    }

    /// Makes the stack and the modal screen match `path` (`/main`, `/main/list`, `/main/second`)
    /// without animation, as opening that URL asks.
    ///
    /// What to take away is decided on the screens as the link found them: main appearing on the
    /// way (the modal screen dismissed) may push the list for a pending launch (seed 002), and
    /// the link must not pop that again — the launch is shown, once.
    func show(path: String) {
        let wantsList = path == "/main/list"
        let wantsSecond = path == "/main/second"
        let stacked = navigation.viewControllers.count > 1
        if root.presented != nil && !wantsSecond {
            root.dismiss(animated: false)
            for case let second as SecondCoordinator in children { second.finish() }
        }
        if stacked && !wantsList { navigation.popToRoot(animated: false) }
        if wantsList && navigation.viewControllers.count == 1 {
            navigation.push(wire(ListScreen()), animated: false)
        }
        if wantsSecond && root.presented == nil {
            let second = SecondCoordinator(root: root)
            addChild(second)
            second.start(animated: false)
        }
    }

    /// Makes this coordinator handle the list's actions.
    @discardableResult
    private func wire(_ list: ListScreen) -> ListScreen {
        list.handle(by: self) { coordinator, action, _ in
            switch action {
            case .pop: coordinator.navigation.pop(animated: true)
            }
        }
        return list
    }

    /// Main's actions.
    private func handle(_ action: MainAction) {
        switch action {
        case .showList:
            navigation.push(wire(ListScreen()), animated: true)
        case .presentSecond:
            let second = SecondCoordinator(root: root)
            addChild(second)
            second.start()
        case .remind:
            root.context.scheduleNotification(
                title: "AppShell", body: "Your reminder: open the list.",
                afterMilliseconds: reminderDelayMilliseconds)
        case .logout:
            onLogout()
        }
    }
}
