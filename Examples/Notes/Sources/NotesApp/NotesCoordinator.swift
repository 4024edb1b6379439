import AppShell

/// The logged-in flow: owns the navigation stack (the list, a note pushed on it) and starts the
/// compose flow.
final class NotesCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "notes"
    override class var shows: [any Restorable.Type] {
        [NoteListScreen.self, NoteDetailScreen.self, ComposeCoordinator.self, AccountCoordinator.self]
    }

    private let root: RootController
    private let navigation: NavigationController

    /// A flow on `root`, with a new stack or (restoring) the one already shown.
    init(root: RootController, navigation: NavigationController? = nil) {
        self.root = root
        self.navigation = navigation ?? NavigationController(rootViewController: NoteListScreen())
        super.init(name: Self.restorationIdentifier)
        handle(NoteListAction.self) { [unowned self] action, _ throws(ActionError) in try list(action) }
        handle(NoteDetailAction.self) { [unowned self] action, _ in
            if action == .delete, let id = openNoteID { Notebook(self.root.userDefaults).delete(id) }
            pop()
        }
        if navigation == nil { own(self.navigation) }
    }

    /// The flow of the navigation stack a snapshot restored.
    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let navigation = root.navigation, navigation.viewControllers[0] is NoteListScreen else { return nil }
        self.init(root: root, navigation: navigation)
    }

    /// Shows the list with a cross-dissolve.
    override func start() { root.transition(to: navigation, animated: true) }

    /// The number of the note pushed, if one is.
    var openNoteID: Int? { (navigation.viewControllers.last as? NoteDetailScreen)?.noteID }

    /// Makes the screens match `page` — the list, the compose sheet over it, or a note pushed on
    /// it — without animation, as opening its URL asks; false (nothing changes) when it names no
    /// note.
    func show(_ page: NotesRoute) -> Bool {
        let noteID: Int?
        switch page {
        case .login: return false
        case .notes, .compose: noteID = nil
        case .note(let id):
            guard Notebook(root.userDefaults).note(id) != nil else { return false }
            noteID = id
        }
        let wantsCompose = page == .compose
        if root.presented != nil && !wantsCompose {
            for case let compose as ComposeCoordinator in children { compose.close() }
        }
        if let noteID {
            guard openNoteID != noteID else { return true }
            if navigation.viewControllers.count > 1 { pop(animated: false, toRoot: true) }
            push(noteID, animated: false)
        } else if navigation.viewControllers.count > 1 && !wantsCompose {
            pop(animated: false, toRoot: true)
        }
        if wantsCompose && root.presented == nil { startCompose(animated: false) }
        return true
    }

    /// Starts the compose flow as this one's child.
    func startCompose(animated: Bool) {
        let compose = ComposeCoordinator(root: root)
        addChild(compose)
        compose.start(animated: animated)
    }

    /// The list's actions.
    private func list(_ action: NoteListAction) throws(ActionError) {
        switch action {
        case .open(let id):
            guard Notebook(root.userDefaults).note(id) != nil else {
                throw ActionError(status: 404, "There is no note \(id).")
            }
            push(id, animated: true)
        case .compose:
            startCompose(animated: true)
        case .account:
            let account = AccountCoordinator(root: root)
            addChild(account)
            account.start()
        case .logout:
            (parent as? AppCoordinator)?.logout()
        }
    }

    /// Pushes the note numbered `id`.
    private func push(_ id: Int, animated: Bool) {
        navigation.push(own(NoteDetailScreen(noteID: id)), animated: animated)
    }

    /// Back to the list.
    private func pop(animated: Bool = true, toRoot: Bool = false) {
        if toRoot { navigation.popToRoot(animated: animated) } else { navigation.pop(animated: animated) }
    }
}

extension NotesCoordinator: AccountCoordinatorDelegate {
    /// Logged out everywhere else: this browser logs out too.
    func accountCoordinatorDidEndOtherSessions(_ account: AccountCoordinator) {
        (parent as? AppCoordinator)?.logout()
    }
}
