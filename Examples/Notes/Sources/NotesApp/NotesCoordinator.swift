import AppShell

/// The logged-in flow: owns the navigation stack (the list, a note pushed on it) and starts the
/// compose flow.
final class NotesCoordinator: Coordinator {
    private let root: RootController
    private let navigation: NavigationController
    /// Called when the user logs out.
    var onLogout: () -> Void = {}

    /// A flow on `root`, with a new stack or (restoring) the one already shown.
    init(
        root: RootController,
        navigation: NavigationController = NavigationController(rootViewController: NoteListScreen())
    ) {
        self.root = root
        self.navigation = navigation
        super.init(name: "notes")
        for screen in navigation.viewControllers {
            if let list = screen as? NoteListScreen { wire(list) }
            if let detail = screen as? NoteDetailScreen { wire(detail) }
        }
    }

    /// Shows the list with a cross-dissolve.
    override func start() { root.transition(to: navigation, animated: true) }

    /// The number of the note pushed, if one is: the app keeps it in the snapshot.
    var openNoteID: Int? { (navigation.viewControllers.last as? NoteDetailScreen)?.noteID }

    /// Makes the screens match `path` — `/notes`, `/notes/new` or `/notes/<id>` — without
    /// animation, as opening that URL asks; false (nothing changes) when it names no note.
    func show(path: String) -> Bool {
        guard path.hasPrefix("/notes") else { return false }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let wantsCompose = path == "/notes/new"
        let noteID = path == "/notes" || wantsCompose ? nil : Int(last)
        if path != "/notes" && !wantsCompose {
            guard let noteID, Notebook(defaults: root.defaults).note(noteID) != nil else { return false }
        }
        if root.presented != nil && !wantsCompose {
            for case let compose as ComposeCoordinator in children { compose.close() }
        }
        if let noteID {
            guard openNoteID != noteID else { return true }
            if navigation.viewControllers.count > 1 { navigation.popToRoot(animated: false) }
            push(noteID, animated: false)
        } else if navigation.viewControllers.count > 1 && !wantsCompose {
            navigation.popToRoot(animated: false)
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

    /// Pushes the note numbered `id`.
    private func push(_ id: Int, animated: Bool) {
        let detail = NoteDetailScreen()
        detail.noteID = id
        navigation.push(wire(detail), animated: animated)
    }

    @discardableResult
    private func wire(_ list: NoteListScreen) -> NoteListScreen {
        list.handle(by: self) { coordinator, action, request throws(ActionError) in
            switch action {
            case .open:
                guard let id = request.string("id").flatMap({ Int($0) }),
                    Notebook(defaults: coordinator.root.defaults).note(id) != nil
                else { throw ActionError(status: 404, "There is no note \(request.string("id") ?? "").") }
                coordinator.push(id, animated: true)
            case .compose:
                coordinator.startCompose(animated: true)
            case .logout:
                coordinator.onLogout()
            }
        }
        return list
    }

    @discardableResult
    private func wire(_ detail: NoteDetailScreen) -> NoteDetailScreen {
        detail.handle(by: self) { coordinator, action, _ in
            switch action {
            case .back:
                coordinator.navigation.pop(animated: true)
            case .delete:
                if let id = coordinator.openNoteID { Notebook(defaults: coordinator.root.defaults).delete(id) }
                coordinator.navigation.pop(animated: true)
            }
        }
        return detail
    }
}
