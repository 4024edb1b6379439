import AppShell
import AppShellJSON
import AppShellSessions

/// The top of every session's coordinator tree (`app`): it routes from the splash to login or
/// main (seed 001), between them on login and logout, and handles launches from a notification
/// (seed 002).
final class AppCoordinator: Coordinator, ApplicationCoordinator, ScreenActionHandler {
    let root: RootController
    private let environment: DemoEnvironment
    /// When the splash's start-up work began; `nil` once it finished.
    private var splashStartedAt: Int64?
    /// The page a deep link opened during the splash asked for (e.g. `/main/second`): once the
    /// splash is done, main shows it, or login leads there (`/login?next=…`). Like a URL an iOS
    /// app is launched with, it waits for the start-up work.
    private(set) var splashTarget: String?

    /// A new session's app: the root shows the splash, whose work began at `now`.
    init(environment: DemoEnvironment, defaults: DefaultsStore, now: Int64) {
        self.environment = environment
        let splash = SplashScreen()
        root = RootController(initial: splash, defaults: defaults)
        splashStartedAt = now
        super.init(name: "app")
        splash.actionHandler = self
    }

    /// A session's app rebuilt from its snapshot: the screens come from the app's registry by
    /// name, then the coordinators that own them are made around them; `nil` when the snapshot
    /// names screens this app lacks or that no flow of it shows together.
    init?(environment: DemoEnvironment, snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) {
        self.environment = environment
        guard let screens = DemoShell.screens.restore(snapshot),
            screens.presented == nil || (screens.child is NavigationController && screens.presented is SecondScreen)
        else { return nil }
        root = RootController(
            restoring: screens.child, presented: screens.presented, log: LifecycleLog(records: snapshot.lifecycle),
            version: snapshot.version, lastTransition: snapshot.transition, defaults: defaults)
        super.init(name: "app")
        switch screens.child {
        case let splash as SplashScreen:
            splashStartedAt = snapshot.extra["splashStartedAt"]?.integerValue.map(Int64.init) ?? now
            splashTarget = snapshot.extra["splashTarget"]?.stringValue
            splash.actionHandler = self
        case let login as LoginScreen:
            adopt(LoginCoordinator(root: root, environment: environment, screen: login))
        case let navigation as NavigationController where navigation.viewControllers[0] is MainScreen:
            let main = MainCoordinator(root: root, navigation: navigation)
            adopt(main)
            if let second = screens.presented as? SecondScreen {
                main.addChild(SecondCoordinator(root: root, screen: second))
            }
        default:
            return nil
        }
    }

    /// Makes `login` or `main` this coordinator's child, wired to come back on login and logout.
    private func adopt(_ coordinator: Coordinator) {
        if let login = coordinator as? LoginCoordinator { login.onLogin = { [unowned self] in showMain() } }
        if let main = coordinator as? MainCoordinator {
            main.onLogout = { [unowned self] in logout() }
            main.reminderDelayMilliseconds = environment.reminderDelayMilliseconds
        }
        addChild(coordinator)
    }

    /// When the splash's work is due to finish.
    var nextDeadline: Int64? { splashStartedAt.map { $0 + environment.splashDelayMilliseconds } }

    /// When the splash began and where it leads, while it has not finished.
    var extraSnapshot: JSON {
        guard let splashStartedAt else { return [:] }
        var extra: [String: JSON] = ["splashStartedAt": .integer(Int(splashStartedAt))]
        if let splashTarget { extra["splashTarget"] = .string(splashTarget) }
        return .object(extra)
    }

    /// Remembers the page to show once the splash is done (only while it runs).
    func rememberSplashTarget(_ path: String) {
        guard root.child is SplashScreen else { return }
        splashTarget = path
    }

    /// Finishes the splash once its delay has passed: runs the start-up work, then routes by
    /// `isLogin` (seed 001).
    func advance(now: Int64) {
        guard let startedAt = splashStartedAt, now - startedAt >= environment.splashDelayMilliseconds,
            root.child is SplashScreen
        else { return }
        splashStartedAt = nil
        let target = splashTarget
        splashTarget = nil
        environment.startupWork(root.defaults)
        if root.defaults.bool(forKey: "isLogin") {
            showMain()
            if let target { show(path: target) }
        } else {
            showLogin()
            rememberNext(target)
        }
    }

    /// `launch` with `source: "notification"` (seed 002): sets the one-shot `viewType` flag, which
    /// main consumes when it next appears (at once when it is showing).
    func launch(_ action: ScreenAction) throws(ActionError) {
        guard action.string("source") == "notification" else {
            throw ActionError(status: 400, "launch needs \"source\": \"notification\"")
        }
        root.defaults.set(1, forKey: "viewType")
        if root.visibleScreen is ListScreen {
            // Already showing what the notification opens.
            root.defaults.set(0, forKey: "viewType")
        }
        (child(named: "main") as? MainCoordinator)?.consumeLaunchFlagIfVisible()
    }

    /// Where to go after logging in, shown in the login form.
    func rememberNext(_ next: String?) {
        (child(named: "login") as? LoginCoordinator)?.next = next
    }

    /// Makes the logged-in stack show `path` without animation.
    func show(path: String) {
        (child(named: "main") as? MainCoordinator)?.show(path: path)
    }

    func showLogin() {
        for child in children { removeChild(child) }
        let login = LoginCoordinator(root: root, environment: environment)
        adopt(login)
        login.start()
    }

    func showMain() {
        for child in children { removeChild(child) }
        let main = MainCoordinator(root: root)
        adopt(main)
        main.start()
    }

    /// Logout: `isLogin` = false, a new session id, back to login. What belonged to the user —
    /// their name, a launch flag — goes with them: whoever uses the browser next sees neither,
    /// and a pending launch does not push the list on the way out.
    func logout() {
        root.defaults.set(false, forKey: "isLogin")
        root.defaults.removeObject(forKey: "username")
        root.defaults.removeObject(forKey: "viewType")
        root.rotateSessionID()
        showLogin()
    }

    func screen(_ screen: any ScreenController, didRequest action: ScreenAction) throws(ActionError) {
        throw ActionError(status: 409, "\(screen.name) does not offer \(action.name)")
    }
}
