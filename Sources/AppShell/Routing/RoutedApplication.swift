/// An app whose pages are declared once, as `AppRoutes`: the framework derives from them its page
/// paths, the URL of what a session shows, what a deep link waits for during the start-up, and
/// reads every page URL back as a case; the app decides, typed, what a page shows (`open(_:in:)`)
/// — its coordinators switch over the cases, and no app writes a URL string twice.
public protocol RoutedApplication: ShellApplication {
    /// The app's pages.
    associatedtype Routes: AppRoutes
    /// The page the session shows now. By default the case whose screen is visible, its
    /// parameters from the screen's `@SceneStorage` (`nil`: `/`).
    func route(of app: LiveApp) -> Routes?
    /// Makes `app` show `route` (without animation, as opening its URL asks), or says where to
    /// go instead (`.redirect(Routes.login(next: route.url).url)`) or that it names nothing
    /// (`.notFound`: a note that is not there). Called once the start-up work is done.
    func open(_ route: Routes, in app: LiveApp) -> PageRoute
    /// The page a page opened at `route` asks the app to show once its start-up is done (the deep
    /// link), or `nil` for none. By default `route` itself.
    func deepLink(for route: Routes) -> Routes?
}

extension RoutedApplication {
    /// The case whose screen is visible, its parameters from the screen's `@SceneStorage`.
    public func route(of app: LiveApp) -> Routes? { Routes.showing(app.root.visibleScreen) }

    /// `route` itself.
    public func deepLink(for route: Routes) -> Routes? { route }

    /// Every case's URL pattern.
    public var pagePaths: [String] { Routes.pagePaths }

    /// The deep link the start-up waits for, if any; else `route(of:)`'s URL, or `/`.
    public func url(of app: LiveApp) -> String {
        if let link = app.pendingDeepLink { return link }
        return route(of: app)?.url ?? "/"
    }

    /// `path` read as a case (with `next` for a parameter of that name the pattern does not
    /// name): while the start-up work runs every page shows it, its deep link waiting; after,
    /// `/` leads to the current page (or shows it, when no case is its: a screen shown by a
    /// `Route` button has no URL of its own) and a case is given to `open(_:in:)`. A path no
    /// case matches, or whose parameters do not decode (`/notes/abc`), is 404.
    public func open(path: String, next: String?, in app: LiveApp) -> PageRoute {
        guard let route = Routes(path: path, query: next.map { ["next": $0] } ?? [:]) else {
            guard path == "/" else { return .notFound }
            guard !app.isStarting else { return .show }
            let current = url(of: app)
            return current == "/" ? .show : .redirect(current)
        }
        if app.isStarting {
            if let link = deepLink(for: route) { app.open(deepLink: link.url) }
            return .show
        }
        return open(route, in: app)
    }

    /// The deep link `path` (with `next`) asks for, as a URL; `nil` for `/` or a path that is
    /// no page.
    public func deepLink(forPath path: String, next: String?) -> String? {
        guard let route = Routes(path: path, query: next.map { ["next": $0] } ?? [:]) else { return nil }
        return deepLink(for: route)?.url
    }
}
