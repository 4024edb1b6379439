import AppShell

/// Notes as an AppShell application: its first screen, its app coordinator (whose `shows` give
/// the framework every screen and coordinator, so the known actions and restoration), its splash's
/// start-up work, and the URL of each screen.
public struct NotesApp: ShellApplication {
    /// What the coordinators share.
    public let environment: NotesEnvironment

    /// The app over `environment`.
    public init(environment: NotesEnvironment) { self.environment = environment }

    /// The URLs of the app's pages besides `/`: a note's is `/notes/<id>`, the compose sheet's
    /// `/notes/new`.
    public static let pagePaths = ["/login", "/notes", "/notes/new", "/notes/:id"]

    /// The splash, where every new session starts.
    public func makeFirstScreen() -> any ScreenController { SplashScreen() }

    /// The app coordinator of a session on `root`.
    public func makeCoordinator(root: RootController) -> AppCoordinator {
        AppCoordinator(root: root, environment: environment)
    }

    /// The splash shows for `splashMilliseconds`, then the app coordinator routes.
    public var startup: StartupWork? { StartupWork(milliseconds: environment.splashMilliseconds) }

    /// The URL of what is visible: `/login` (with `?next=`), `/notes`, `/notes/<id>`, `/notes/new`;
    /// the splash shows at the deep link it was opened with.
    public func url(of app: LiveApp) -> String {
        if let link = app.pendingDeepLink { return link }
        switch app.root.visibleScreen {
        case is SplashScreen:
            return "/"
        case let login as LoginScreen:
            return login.next.map { "/login?next=" + PercentEncoding.encode($0) } ?? "/login"
        case let detail as NoteDetailScreen:
            return "/notes/\(detail.noteID)"
        case is ComposeScreen:
            return "/notes/new"
        default:
            return "/notes"
        }
    }

    /// Shows what `path` names. During the splash every page shows the splash and its deep link
    /// waits for it; logged out, a page of the notes leads to login, which leads back to it.
    public func open(path: String, next: String?, in app: LiveApp) -> PageRoute {
        guard let coordinator = app.coordinator as? AppCoordinator else { return .notFound }
        if app.isStarting {
            if let link = deepLink(forPath: path, next: next) { app.open(deepLink: link) }
            return .show
        }
        let isNotesPage = path == "/notes" || path.hasPrefix("/notes/")
        switch app.root.child {
        case is LoginScreen:
            if isNotesPage { return .redirect("/login?next=" + PercentEncoding.encode(path)) }
            guard path == "/login" else { return .redirect(url(of: app)) }
            if let link = deepLink(forPath: path, next: next) { coordinator.rememberNext(link) }
            return .show
        default:
            if isNotesPage { return coordinator.show(path: path) ? .show : .notFound }
            return .redirect(url(of: app))
        }
    }

    /// A page of the notes, or login's `next` when it names one: what a link opened during the
    /// splash shows once it is done.
    public func deepLink(forPath path: String, next: String?) -> String? {
        if path == "/notes" || path.hasPrefix("/notes/") { return path }
        if path == "/login", let next, next.hasPrefix("/notes") { return next }
        return nil
    }
}
