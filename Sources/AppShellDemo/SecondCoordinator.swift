import AppShell

/// Presents the second screen and finishes (leaves its parent) once it is dismissed.
final class SecondCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "second"
    override class var shows: [any Restorable.Type] { [SecondScreen.self] }

    private let root: RootController
    private let screen: SecondScreen

    /// A flow on `root`, with a new screen or (restoring) the one already presented.
    init(root: RootController, screen: SecondScreen = SecondScreen()) {
        self.root = root
        self.screen = screen
        super.init(name: Self.restorationIdentifier)
        handle(SecondAction.self) { [unowned self] action, _ in handle(action) }
        own(screen)
    }

    /// The flow of the modal screen a snapshot restored.
    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let screen = root.presented as? SecondScreen else { return nil }
        self.init(root: root, screen: screen)
    }

    /// Presents the screen modally.
    override func start() { start(animated: true) }

    /// Presents the screen, animated or not (opening its URL directly).
    func start(animated: Bool) {
        root.present(screen, animated: animated)
    }

    /// `dismiss`: closes the screen, then finishes.
    private func handle(_ action: SecondAction) {
        switch action {
        case .dismiss: root.dismiss(animated: true) { [self] in finish() }
        }
    }
}
