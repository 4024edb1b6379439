import AppShell

/// The demo as an AppShell application: its screens, coordinators, actions and page URLs.
public struct DemoShell: ShellApplication {
    /// What the coordinators share.
    public let environment: DemoEnvironment

    /// The demo over `environment`.
    public init(environment: DemoEnvironment) { self.environment = environment }

    /// The URLs of the demo's pages besides `/`.
    public static let pagePaths = ["/login", "/main", "/main/list", "/main/second"]

    /// The splash, where every new session starts.
    public func makeFirstScreen() -> any ScreenController { SplashScreen() }

    /// The demo's app coordinator: what it shows (`AppCoordinator.shows`) is every screen and
    /// coordinator the demo has, so its known actions and its restoration come from there.
    public func makeCoordinator(root: RootController) -> AppCoordinator {
        AppCoordinator(root: root, environment: environment)
    }

    /// The splash's start-up work: at least `splashDelayMilliseconds`, then the environment's.
    public var startup: StartupWork? {
        StartupWork(milliseconds: environment.splashDelayMilliseconds, work: environment.startupWork)
    }

    /// `/`, `/login`, `/main`, `/main/list` or `/main/second`, by what is visible; the login
    /// page's URL keeps where the user was going (`/login?next=…`), so that reloading it, a
    /// failed login's redirect and the page's address all keep it.
    public func url(of shell: LiveApp) -> String {
        // The splash shows at any URL: at the deep link it was opened with, if any.
        if let target = shell.pendingDeepLink { return target }
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
        if shell.isStarting {
            guard path == "/" || DemoShell.pagePaths.contains(path) else { return .notFound }
            // Where the user was going, once the splash is done (`/` keeps what was asked before).
            if let target = deepLink(forPath: path, next: next) { shell.open(deepLink: target) }
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

    /// The logged-in page `path` (with `next` for `/login`) leads to, if it names one: what a deep
    /// link opened during the splash shows once it is done.
    public func deepLink(forPath path: String, next: String?) -> String? {
        let mainPaths = ["/main", "/main/list", "/main/second"]
        if mainPaths.contains(path) { return path }
        if path == "/login", let next, mainPaths.contains(next) { return next }
        return nil
    }
}
