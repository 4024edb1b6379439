import AppShell

/// The logged-in flow: owns the navigation stack (main, list) and starts the second screen's
/// coordinator.
final class MainCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "main"
    override class var shows: [any Restorable.Type] {
        [MainScreen.self, ListScreen.self, SecondCoordinator.self, AccountCoordinator.self]
    }

    private let root: RootController
    private let navigation: NavigationController

    /// A logged-in flow on `root`, with a new stack or (restoring) the one already shown.
    init(root: RootController, navigation: NavigationController? = nil) {
        self.root = root
        self.navigation = navigation ?? NavigationController(rootViewController: MainScreen())
        super.init(name: Self.restorationIdentifier)
        handle(MainAction.self) { [unowned self] action, _ in handle(action) }
        handle(ListAction.self) { [unowned self] action, _ in
            switch action {
            case .pop: self.navigation.pop(animated: true)
            }
        }
        if navigation == nil { own(self.navigation.viewControllers[0]) }
    }

    /// The flow of the navigation stack a snapshot restored.
    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let navigation = root.navigation, navigation.viewControllers[0] is MainScreen else { return nil }
        self.init(root: root, navigation: navigation)
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

    /// Makes the stack and the modal screen match `page` (main, the list pushed, the second
    /// screen presented) without animation, as opening its URL asks.
    ///
    /// What to take away is decided on the screens as the link found them: main appearing on the
    /// way (the modal screen dismissed) may push the list for a pending launch (the one-shot `viewType` flag), and
    /// the link must not pop that again — the launch is shown, once.
    func show(_ page: DemoRoute) {
        let wantsList = page == .list
        let wantsSecond = page == .second
        let stacked = navigation.viewControllers.count > 1
        if root.presented != nil && !wantsSecond {
            root.dismiss(animated: false)
            for case let second as SecondCoordinator in children { second.finish() }
        }
        if stacked && !wantsList { navigation.popToRoot(animated: false) }
        if wantsList && navigation.viewControllers.count == 1 {
            navigation.push(own(ListScreen()), animated: false)
        }
        if wantsSecond && root.presented == nil {
            let second = SecondCoordinator(root: root)
            addChild(second)
            second.start(animated: false)
        }
    }

    /// Main's actions.
    private func handle(_ action: MainAction) {
        switch action {
        case .showList:
            navigation.push(own(ListScreen()), animated: true)
        case .presentSecond:
            let second = SecondCoordinator(root: root)
            addChild(second)
            second.start()
        case .remind:
            // The app's setting, from the environment it gave at start.
            root.context.scheduleNotification(
                title: "AppShell", body: "Your reminder: open the list.",
                afterMilliseconds: root.environment.reminderDelayMilliseconds, launch: DemoLaunch.notification)
        case .account:
            // The framework's account screen (a password change), presented modally.
            let account = AccountCoordinator(root: root)
            addChild(account)
            account.start()
        case .logout:
            (parent as? AppCoordinator)?.logout()
        }
    }
}

extension MainCoordinator: AccountCoordinatorDelegate {
    /// Logged out everywhere else: this session logs out too, back to login.
    func accountCoordinatorDidEndOtherSessions(_ account: AccountCoordinator) {
        (parent as? AppCoordinator)?.logout()
    }
}
