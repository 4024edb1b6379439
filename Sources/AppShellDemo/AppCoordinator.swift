import AppShell

/// Where the demo can be launched from (`launch`'s `source`).
public enum DemoLaunch: String, LaunchSources {
    /// The reminder's notification: main shows the list.
    case notification
}

/// The top of every session's coordinator tree (`app`): its routing decisions — from the splash
/// to login or main by the stored `isLogin` flag, between them on login and logout, and what a launch from a
/// notification or a deep link opens. The framework runs the start-up work, keeps the
/// deep link that waits for it, and rebuilds the tree after a restart from what `shows` declares.
public final class AppCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController

    /// The splash, and the two flows it leads to.
    public override class var shows: [any Restorable.Type] {
        [SplashScreen.self, LoginCoordinator.self, MainCoordinator.self]
    }

    /// The app coordinator of a session on `root` (the splash, or what a snapshot restored).
    init(root: RootController) {
        self.root = root
        super.init(name: "app")
    }

    /// The splash's work is done: main when `isLogin` (at the deep link the splash was opened
    /// with, if any), else login, which leads there after logging in.
    public func startupDidFinish(deepLink: String?) {
        if root.username != nil {
            showMain()
            if let page = deepLink.flatMap(DemoRoute.init(url:)) { show(page) }
        } else {
            showLogin()
            rememberNext(deepLink)
        }
    }

    /// `launch` from a notification: sets the one-shot `viewType` flag, which main
    /// consumes when it next appears (at once when it is showing).
    public func launch(from source: DemoLaunch, _ request: ActionRequest) throws(ActionError) {
        switch source {
        case .notification:
            root.defaults.set(1, forKey: "viewType")
            if root.visibleScreen is ListScreen {
                // Already showing what the notification opens.
                root.defaults.set(0, forKey: "viewType")
            }
            (child(named: "main") as? MainCoordinator)?.consumeLaunchFlagIfVisible()
        }
    }

    /// A deep link whose page's stream came after the splash finished: login still leads there.
    public func open(deepLink: String) {
        if let login = root.visibleScreen as? LoginScreen, login.next == nil { rememberNext(deepLink) }
    }

    /// Where to go after logging in, shown in the login form.
    func rememberNext(_ next: String?) {
        (child(named: "login") as? LoginCoordinator)?.next = next
    }

    /// Makes the logged-in stack show `page` without animation.
    func show(_ page: DemoRoute) {
        (child(named: "main") as? MainCoordinator)?.show(page)
    }

    func showLogin() {
        for child in children { removeChild(child) }
        let login = LoginCoordinator(root: root)
        addChild(login)
        login.start()
    }

    func showMain() {
        for child in children { removeChild(child) }
        let main = MainCoordinator(root: root)
        addChild(main)
        main.start()
    }

    /// Logout: `isLogin` = false, a new session id, back to login. What belonged to the user —
    /// their name, a launch flag — goes with them: whoever uses the browser next sees neither,
    /// and a pending launch does not push the list on the way out.
    func logout() {
        root.defaults.removeObject(forKey: "viewType")
        root.logOut()
        showLogin()
    }
}

extension AppCoordinator: LoginCoordinatorDelegate {
    /// Logged in: main (the framework opens the page asked for before, if any, after this).
    public func loginCoordinatorDidLogIn(_ login: LoginCoordinator) { showMain() }
}
