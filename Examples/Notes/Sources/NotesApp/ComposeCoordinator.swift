import AppShell

/// The compose flow: presents the sheet, keeps the note on `save`, and finishes (leaves its
/// parent) once the sheet is dismissed.
final class ComposeCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "compose"
    override class var shows: [any Restorable.Type] { [ComposeScreen.self] }

    private let root: RootController
    private let screen: ComposeScreen

    /// A flow on `root`, with a new sheet or (restoring) the one already presented.
    init(root: RootController, screen: ComposeScreen = ComposeScreen()) {
        self.root = root
        self.screen = screen
        super.init(name: Self.restorationIdentifier)
        handle(ComposeAction.self) { [unowned self] action, _ throws(ActionError) in try act(action) }
        own(screen)
    }

    /// The flow of the sheet a snapshot restored.
    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let screen = root.presented as? ComposeScreen else { return nil }
        self.init(root: root, screen: screen)
    }

    /// Presents the sheet.
    override func start() { start(animated: true) }

    /// Presents the sheet, animated or not (opening `/notes/new`).
    func start(animated: Bool) { root.present(screen, animated: animated) }

    /// Closes the sheet without animation (a link to another page).
    func close() {
        root.dismiss(animated: false)
        finish()
    }

    private func act(_ action: ComposeAction) throws(ActionError) {
        switch action {
        case .save(let title, let body):
            do {
                try Notebook(root.userDefaults).add(title: title, body: body)
            } catch {
                screen.message = error.message
                screen.draftTitle = title
                screen.draftBody = body
                throw error
            }
            root.dismiss(animated: true) { [self] in finish() }
        case .cancel:
            root.dismiss(animated: true) { [self] in finish() }
        }
    }
}
