import AppShell

/// Where Notes can be launched from (`launch`'s `source`).
public enum NotesLaunch: LaunchSources {
    /// A link to one note (a notification, another app): `launch` with the note's `id`.
    case note(id: Int)

    /// One sample of each source: the API document's example.
    public static let allCases: [NotesLaunch] = [.note(id: 1)]
}

/// The top of every session's coordinator tree (`app`): its routing decisions — after the splash
/// to login or the notes by the stored `isLogin` flag, between them on login and logout, and what
/// a deep link or a launch naming a note opens. The framework runs the splash's start-up work,
/// keeps the deep link that waits for it, and rebuilds the tree after a restart from `shows`.
public final class AppCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController

    /// The splash, and the two flows it leads to.
    public override class var shows: [any Restorable.Type] {
        [SplashScreen.self, LoginCoordinator.self, NotesCoordinator.self]
    }

    /// The app coordinator of a session on `root` (the splash, or what a snapshot restored).
    init(root: RootController) {
        self.root = root
        super.init(name: "app")
    }

    private var notes: NotesCoordinator? { child(named: "notes") as? NotesCoordinator }
    private var login: LoginCoordinator? { child(named: "login") as? LoginCoordinator }

    /// The splash is done: the notes (at the deep link the splash was opened with or a launch
    /// asked for, if any) when logged in, else login, which leads there after.
    public func startupDidFinish(deepLink: String?) {
        if root.username != nil { showNotes(opening: deepLink) } else { showLogin(next: deepLink) }
    }

    /// `launch` with `"source": "note"` and the note's `id`: opens the note now, after the splash,
    /// or after login.
    public func launch(from source: NotesLaunch, _ request: ActionRequest) throws(ActionError) {
        switch source {
        case .note(let id):
            let page = NotesRoute.note(id: id)
            if let notes {
                guard notes.show(page) else { throw ActionError(status: 404, "There is no note \(id).") }
            } else if let login {
                login.next = page.url
            } else {
                // The splash: the framework keeps the note as the deep link waiting for it (in the
                // snapshot, so a restart meanwhile keeps it too) and gives it back once it is done.
                root.open(deepLink: page.url)
            }
        }
    }

    /// A deep link whose page's stream came after the splash was done: login leads there, the
    /// notes show it.
    public func open(deepLink: String) {
        if let login, login.next == nil { login.next = deepLink }
        if let notes, let page = NotesRoute(url: deepLink) { _ = notes.show(page) }
    }

    /// Makes the logged-in screens show `page`; false when it names no note.
    func show(_ page: NotesRoute) -> Bool { notes?.show(page) ?? false }

    /// Where to go after logging in (`/login?next=…`).
    func rememberNext(_ next: String?) { login?.next = next }

    // MARK: Flows

    func showLogin(next: String?) {
        for child in children { removeChild(child) }
        let login = LoginCoordinator(root: root)
        addChild(login)
        login.next = next
        login.start()
    }

    func showNotes(opening path: String?) {
        for child in children { removeChild(child) }
        let notes = NotesCoordinator(root: root)
        addChild(notes)
        notes.start()
        if let page = path.flatMap(NotesRoute.init(url:)) { _ = notes.show(page) }
    }

    /// `isLogin` = false, the name removed, a new session id, back to login. The notes stay, under
    /// the user's name, for their next login in this browser.
    func logout() {
        root.logOut()
        showLogin(next: nil)
    }
}

extension AppCoordinator: LoginCoordinatorDelegate {
    /// Logged in: the welcome note the first time, then the notes, at the page asked for before.
    public func loginCoordinatorDidLogIn(_ login: LoginCoordinator) {
        Notebook(root.userDefaults).welcomeOnce()
        showNotes(opening: login.next)
    }
}
