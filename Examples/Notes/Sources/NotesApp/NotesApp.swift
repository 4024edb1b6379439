import AppShell
import AppShellHTTP
import AppShellSessions

/// Notes as an AppShell application: its screens, how a session's app starts and comes back from
/// a snapshot, and the URL of each screen.
public struct NotesApp: ShellApplication {
    /// What the coordinators share.
    public let environment: NotesEnvironment

    /// The app over `environment`.
    public init(environment: NotesEnvironment) { self.environment = environment }

    /// The URLs of the app's pages besides `/`: a note's is `/notes/<id>`, the compose sheet's
    /// `/notes/new`.
    public static let pagePaths = ["/login", "/notes", "/notes/new", "/notes/:id"]

    /// The screens: the known actions (and the 400 for any other name) are derived from them, and
    /// a restart rebuilds them by name.
    public var screenTypes: [any ScreenController.Type] { NotesApp.screenTypes }

    static var screenTypes: [any ScreenController.Type] {
        [SplashScreen.self, LoginScreen.self, NoteListScreen.self, NoteDetailScreen.self, ComposeScreen.self]
    }

    /// The screens by name, for restoration.
    static let screens = ScreenRegistry(screenTypes)

    /// A new session's app, at the splash.
    public func makeApp(defaults: DefaultsStore, now: Int64) -> LiveApp {
        let coordinator = AppCoordinator(environment: environment, defaults: defaults, now: now)
        coordinator.start()
        return LiveApp(root: coordinator.root, coordinator: coordinator)
    }

    /// The session's app as its snapshot left it.
    public func restoreApp(from snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) -> LiveApp? {
        guard
            let coordinator = AppCoordinator(environment: environment, snapshot: snapshot, defaults: defaults, now: now)
        else { return nil }
        return LiveApp(root: coordinator.root, coordinator: coordinator)
    }

    /// The URL of what is visible: `/login` (with `?next=`), `/notes`, `/notes/<id>`, `/notes/new`;
    /// the splash shows at the deep link it was opened with.
    public func url(of app: LiveApp) -> String {
        let visible = app.root.visibleScreen
        switch visible {
        case is SplashScreen:
            return (app.coordinator as? AppCoordinator)?.splashTarget ?? "/"
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

    /// Shows what `path` names. During the splash every page shows the splash and remembers the
    /// path; logged out, a page of the notes leads to login, which leads back to it.
    public func open(path: String, next: String?, in app: LiveApp) -> PageRoute {
        guard let coordinator = app.coordinator as? AppCoordinator else { return .notFound }
        let isNotesPage = path == "/notes" || path.hasPrefix("/notes/")
        switch app.root.child {
        case is SplashScreen:
            if isNotesPage { coordinator.open(deepLink: path) }
            if path == "/login", let next, next.hasPrefix("/notes") { coordinator.open(deepLink: next) }
            return .show
        case is LoginScreen:
            if isNotesPage { return .redirect("/login?next=" + PercentEncoding.encode(path)) }
            if path == "/login" {
                if let next, next.hasPrefix("/notes") { coordinator.open(deepLink: next) }
                return .show
            }
            return .redirect(url(of: app))
        default:
            if isNotesPage { return coordinator.show(path: path) ? .show : .notFound }
            return .redirect(url(of: app))
        }
    }

    /// The page a deep link opened during the splash passes on with its event stream.
    public func rememberTarget(_ path: String, in app: LiveApp) {
        guard path.hasPrefix("/notes"), let coordinator = app.coordinator as? AppCoordinator else { return }
        if app.root.child is SplashScreen || app.root.child is LoginScreen { coordinator.open(deepLink: path) }
    }
}
