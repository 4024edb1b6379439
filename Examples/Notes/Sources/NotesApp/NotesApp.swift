import AppShell

/// Notes' pages: each declares its URL once, with the screen it shows. The framework derives
/// from them the page paths, the URL of what a session shows (a note's `id` is the detail
/// screen's `@SceneStorage("id")`, login's `next` its `@SceneStorage("next")`) and reads a URL
/// back as a page — typed: `/notes/abc` is no page (404).
public enum NotesRoute: AppRoutes, Equatable {
    /// The login form; `next` is where it leads after (`/login?next=%2Fnotes%2F1`).
    case login(next: String?)
    /// The list of notes.
    case notes
    /// The compose sheet over the list.
    case compose
    /// A note pushed on the list.
    case note(id: Int)

    /// One sample of each page.
    public static let allCases: [NotesRoute] = [.login(next: nil), .notes, .compose, .note(id: 1)]

    /// The page's URL pattern.
    public var path: String {
        switch self {
        case .login: "/login"
        case .notes: "/notes"
        case .compose: "/notes/new"
        case .note: "/notes/:id"
        }
    }

    /// The screen the page shows.
    public var screen: ViewController.Type {
        switch self {
        case .login: LoginScreen.self
        case .notes: NoteListScreen.self
        case .compose: ComposeScreen.self
        case .note: NoteDetailScreen.self
        }
    }
}

/// Notes as an AppShell application: its first screen, its app coordinator (whose `shows` give
/// the framework every screen and coordinator, so the known actions and restoration), its splash's
/// start-up work, and its pages (`NotesRoute`).
public struct NotesApp: RoutedApplication {
    /// How long the splash shows before it routes (milliseconds).
    public let splashMilliseconds: Int64

    /// The app, its splash showing for `splashMilliseconds`.
    public init(splashMilliseconds: Int64) { self.splashMilliseconds = splashMilliseconds }

    /// The splash, where every new session starts.
    public func makeFirstScreen() -> ViewController { SplashScreen() }

    /// The app coordinator of a session on `root`.
    public func makeCoordinator(root: RootController) -> AppCoordinator {
        AppCoordinator(root: root)
    }

    /// The splash shows for `splashMilliseconds`, then the app coordinator routes.
    public var startup: StartupWork? { StartupWork(milliseconds: splashMilliseconds) }

    /// Shows `page` once the splash is done: logged out, a page of the notes leads to login,
    /// which leads back to it; logged in, login leads to what is shown.
    public func open(_ page: NotesRoute, in app: LiveApp) -> PageRoute {
        guard let coordinator = app.coordinator as? AppCoordinator else { return .notFound }
        let loggedOut = app.root.child is LoginScreen
        switch page {
        case .login:
            guard loggedOut else { return .redirect(url(of: app)) }
            if let link = deepLink(for: page) { coordinator.rememberNext(link.url) }
            return .show
        case .notes, .compose, .note:
            guard !loggedOut else { return .redirect(NotesRoute.login(next: page.url).url) }
            return coordinator.show(page) ? .show : .notFound
        }
    }

    /// A page of the notes, or login's `next` when it names one: what a link opened during the
    /// splash shows once it is done.
    public func deepLink(for page: NotesRoute) -> NotesRoute? {
        guard case .login(let next) = page else { return page }
        guard let next, let target = NotesRoute(url: next), target != page else { return nil }
        if case .login = target { return nil }
        return target
    }
}
