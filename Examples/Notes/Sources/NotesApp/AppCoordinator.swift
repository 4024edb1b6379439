import AppShell
import AppShellJSON
import AppShellSessions

/// The top of every session's coordinator tree (`app`): the splash, then login or the notes by the
/// stored `isLogin` flag; between them on login and logout; and launches — a deep link or a
/// `launch` action naming a note — which wait for the splash and for login when they must.
final class AppCoordinator: Coordinator, ApplicationCoordinator, ScreenActionHandler {
    let root: RootController
    private let environment: NotesEnvironment
    /// When the splash began; `nil` once it has routed.
    private var splashStartedAt: Int64?
    /// The page a deep link asked for while the splash showed: opened once it has routed.
    private(set) var splashTarget: String?

    /// A new session's app at the splash, begun at `now`.
    init(environment: NotesEnvironment, defaults: DefaultsStore, now: Int64) {
        self.environment = environment
        let splash = SplashScreen()
        root = RootController(initial: splash, defaults: defaults)
        splashStartedAt = now
        super.init(name: "app")
        splash.actionHandler = self
    }

    /// The app as its snapshot left it: the screens come from the registry by name, the
    /// coordinators that own them are made around them, and the note on the stack gets its number
    /// back from `extra`. `nil` when the snapshot names screens no flow of this app shows together.
    init?(environment: NotesEnvironment, snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) {
        self.environment = environment
        guard let screens = NotesApp.screens.restore(snapshot),
            screens.presented == nil || (screens.child is NavigationController && screens.presented is ComposeScreen)
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
        case let navigation as NavigationController where navigation.viewControllers[0] is NoteListScreen:
            for case let detail as NoteDetailScreen in navigation.viewControllers {
                detail.noteID = snapshot.extra["note"]?.integerValue ?? 0
            }
            let notes = NotesCoordinator(root: root, navigation: navigation)
            adopt(notes)
            if let compose = screens.presented as? ComposeScreen {
                notes.addChild(ComposeCoordinator(root: root, screen: compose))
            }
        default:
            return nil
        }
    }

    private var notes: NotesCoordinator? { child(named: "notes") as? NotesCoordinator }
    private var login: LoginCoordinator? { child(named: "login") as? LoginCoordinator }

    /// Makes `coordinator` this one's only child, wired to come back on login and logout.
    private func adopt(_ coordinator: Coordinator) {
        for child in children { removeChild(child) }
        if let login = coordinator as? LoginCoordinator {
            login.onLogin = { [unowned self] next in showNotes(opening: next) }
        }
        if let notes = coordinator as? NotesCoordinator { notes.onLogout = { [unowned self] in logout() } }
        addChild(coordinator)
    }

    // MARK: The splash and launches (ApplicationCoordinator)

    /// When the splash is due to route.
    var nextDeadline: Int64? { splashStartedAt.map { $0 + environment.splashMilliseconds } }

    /// What the snapshot keeps beside the screens: the splash's start and target while it shows,
    /// and the number of the note on the stack.
    var extraSnapshot: JSON {
        var extra: [String: JSON] = [:]
        if let splashStartedAt { extra["splashStartedAt"] = .integer(Int(splashStartedAt)) }
        if let splashTarget { extra["splashTarget"] = .string(splashTarget) }
        if let id = notes?.openNoteID { extra["note"] = .integer(id) }
        return .object(extra)
    }

    /// Routes once the splash has shown long enough: to the notes (and the deep link's page), or
    /// to login (which leads there after).
    func advance(now: Int64) {
        guard let deadline = nextDeadline, now >= deadline, root.child is SplashScreen else { return }
        splashStartedAt = nil
        let target = splashTarget
        splashTarget = nil
        if root.defaults.bool(forKey: "isLogin") { showNotes(opening: target) } else { showLogin(next: target) }
    }

    /// `launch` with `"source": "note"` and the note's `id` (a notification, another app): opens
    /// the note now, after the splash, or after login.
    func launch(_ action: ScreenAction) throws(ActionError) {
        guard action.string("source") == "note", let id = action.string("id").flatMap({ Int($0) }) else {
            throw ActionError(status: 400, "launch needs \"source\": \"note\" and the note's \"id\"")
        }
        open(deepLink: "/notes/\(id)")
        if let notes, !notes.show(path: "/notes/\(id)") { throw ActionError(status: 404, "There is no note \(id).") }
    }

    /// Remembers `path` where it waits: for the splash, or for login; logged in, nothing waits.
    func open(deepLink path: String) {
        if root.child is SplashScreen {
            splashTarget = path
        } else if let login {
            login.next = path
        }
    }

    /// Makes the logged-in screens show `path`; false when it names no note.
    func show(path: String) -> Bool { notes?.show(path: path) ?? false }

    // MARK: Flows

    private func showLogin(next: String?) {
        let login = LoginCoordinator(root: root, environment: environment)
        adopt(login)
        login.next = next
        login.start()
    }

    private func showNotes(opening path: String?) {
        let notes = NotesCoordinator(root: root)
        adopt(notes)
        notes.start()
        if let path { _ = notes.show(path: path) }
    }

    /// `isLogin` = false, the name removed, a new session id, back to login. The notes stay, under
    /// the user's name, for their next login in this browser.
    private func logout() {
        root.defaults.set(false, forKey: "isLogin")
        root.defaults.removeObject(forKey: "username")
        root.rotateSessionID()
        showLogin(next: nil)
    }

    /// The splash offers nothing.
    func screen(_ screen: any ScreenController, didRequest action: ScreenAction) throws(ActionError) {
        throw ActionError(status: 409, "the \(screen.name) screen does not offer \"\(action.name)\"")
    }
}
