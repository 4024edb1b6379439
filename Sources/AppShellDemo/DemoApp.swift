import AppShell

/// The demo's pages: each declares its URL once, with the screen it shows (login's `next` is its
/// `@SceneStorage("next")`). The framework derives the page paths, the URL of what a session
/// shows, and reads a URL back as a page.
public enum DemoRoute: AppRoutes, Equatable {
    /// The login form; `next` is where it leads after.
    case login(next: String?)
    /// Main, at the bottom of the navigation stack.
    case main
    /// The list pushed on main.
    case list
    /// The second screen presented over main.
    case second

    /// One sample of each page.
    public static let allCases: [DemoRoute] = [.login(next: nil), .main, .list, .second]

    /// The page's URL pattern.
    public var path: String {
        switch self {
        case .login: "/login"
        case .main: "/main"
        case .list: "/main/list"
        case .second: "/main/second"
        }
    }

    /// The screen the page shows.
    public var screen: ViewController.Type {
        switch self {
        case .login: LoginScreen.self
        case .main: MainScreen.self
        case .list: ListScreen.self
        case .second: SecondScreen.self
        }
    }
}

/// The demo as an AppShell application: its screens, coordinators, actions and pages.
public struct DemoApp: RoutedApplication {
    /// What the coordinators share.
    public let environment: DemoEnvironment

    /// The demo over `environment`.
    public init(environment: DemoEnvironment) { self.environment = environment }

    /// The splash, where every new session starts.
    public func makeFirstScreen() -> ViewController { SplashScreen() }

    /// The demo's app coordinator: what it shows (`AppCoordinator.shows`) is every screen and
    /// coordinator the demo has, so its known actions and its restoration come from there.
    public func makeCoordinator(root: RootController) -> AppCoordinator {
        AppCoordinator(root: root)
    }

    /// The splash's start-up work: at least `splashDelayMilliseconds`, then the environment's.
    public var startup: StartupWork? {
        StartupWork(milliseconds: environment.splashDelayMilliseconds, work: environment.startupWork)
    }

    /// Shows `page` once the splash is done: a logged-out user asking for a page of main is sent
    /// to log in first, and comes back after; a logged-in one asking for login stays where they are.
    public func open(_ page: DemoRoute, in app: LiveApp) -> PageRoute {
        guard let coordinator = app.coordinator as? AppCoordinator else { return .notFound }
        let loggedIn = app.root.child is NavigationController
        switch page {
        case .login(let next):
            if loggedIn { return .redirect(url(of: app)) }
            coordinator.rememberNext(next)
            return .show
        case .main, .list, .second:
            guard loggedIn else { return .redirect(DemoRoute.login(next: page.url).url) }
            coordinator.show(page)
            return .show
        }
    }

    /// A page of main, or login's `next` when it names one: what a deep link opened during the
    /// splash shows once it is done.
    public func deepLink(for page: DemoRoute) -> DemoRoute? {
        guard case .login(let next) = page else { return page }
        guard let next, let target = DemoRoute(url: next) else { return nil }
        if case .login = target { return nil }
        return target
    }
}
