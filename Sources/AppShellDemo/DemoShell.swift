import AppShell
import AppShellHTTP
import AppShellSessions

/// The demo as an AppShell application: its screens, coordinators, actions and page URLs.
public struct DemoShell: ShellApplication {
    /// What the coordinators share.
    public let environment: DemoEnvironment

    /// The demo over `environment`.
    public init(environment: DemoEnvironment) { self.environment = environment }

    /// The URLs of the demo's pages besides `/`.
    public static let pagePaths = ["/login", "/main", "/main/list", "/main/second"]

    /// The demo's screens: its known actions are theirs (and `launch`), and a restart rebuilds
    /// them by name (`screens`).
    public var screenTypes: [any ScreenController.Type] { DemoShell.screenTypes }

    static let screenTypes: [any ScreenController.Type] = [
        SplashScreen.self, LoginScreen.self, MainScreen.self, ListScreen.self, SecondScreen.self,
    ]

    /// The demo's screens by name, for restoration.
    static let screens = ScreenRegistry(screenTypes)

    /// A new session at the splash.
    public func makeApp(defaults: DefaultsStore, now: Int64) -> LiveApp {
        let coordinator = AppCoordinator(environment: environment, defaults: defaults, now: now)
        coordinator.start()
        return LiveApp(root: coordinator.root, coordinator: coordinator)
    }

    /// The session as its snapshot left it.
    public func restoreApp(from snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) -> LiveApp? {
        guard
            let coordinator = AppCoordinator(environment: environment, snapshot: snapshot, defaults: defaults, now: now)
        else { return nil }
        return LiveApp(root: coordinator.root, coordinator: coordinator)
    }

    /// `/`, `/login`, `/main`, `/main/list` or `/main/second`, by what is visible; the login
    /// page's URL keeps where the user was going (`/login?next=…`), so that reloading it, a
    /// failed login's redirect and the page's address all keep it.
    public func url(of shell: LiveApp) -> String {
        // The splash shows at any URL: at the deep link it was opened with, if any.
        if let app = shell.coordinator as? AppCoordinator, let target = app.splashTarget { return target }
        switch shell.root.visibleScreen.name {
        case "login":
            guard let next = (shell.root.visibleScreen as? LoginScreen)?.next else { return "/login" }
            return "/login?next=" + PercentEncoding.encode(next)
        case "main": return "/main"
        case "list": return "/main/list"
        case "second": return "/main/second"
        default: return "/"
        }
    }

    /// Shows what `path` names. While the splash runs, every page shows it; a logged-out user
    /// asking for a page of main is sent to log in first, and comes back after.
    public func open(path: String, next: String?, in shell: LiveApp) -> PageRoute {
        guard let app = shell.coordinator as? AppCoordinator else { return .notFound }
        let root = shell.root
        if root.child is SplashScreen {
            guard path == "/" || DemoShell.pagePaths.contains(path) else { return .notFound }
            // Where the user was going, once the splash is done (`/` keeps what was asked before).
            if let target = DemoShell.destination(path: path, next: next) { app.rememberSplashTarget(target) }
            return .show
        }
        let loggedIn = root.child is NavigationController
        switch path {
        case "/":
            return .redirect(url(of: shell))
        case "/login":
            if loggedIn { return .redirect(url(of: shell)) }
            app.rememberNext(next)
            return .show
        case "/main", "/main/list", "/main/second":
            guard loggedIn else { return .redirect("/login?next=" + PercentEncoding.encode(path)) }
            app.show(path: path)
            return .show
        default:
            return .notFound
        }
    }

    /// The page a deep link opened during the splash asks for: its main page, or login's `next`.
    public func rememberTarget(_ path: String, in shell: LiveApp) {
        guard let app = shell.coordinator as? AppCoordinator, let target = DemoShell.destination(path: path, next: nil)
        else { return }
        if shell.root.child is SplashScreen {
            app.rememberSplashTarget(target)
        } else if let login = shell.root.visibleScreen as? LoginScreen, login.next == nil {
            // The splash finished before the page's stream arrived: login still leads there.
            app.rememberNext(target)
        }
    }

    /// The logged-in page `path` (with `next` for `/login`) leads to, if it names one.
    static func destination(path: String, next: String?) -> String? {
        let mainPaths = ["/main", "/main/list", "/main/second"]
        if mainPaths.contains(path) { return path }
        if path == "/login", let next, mainPaths.contains(next) { return next }
        return nil
    }
}
