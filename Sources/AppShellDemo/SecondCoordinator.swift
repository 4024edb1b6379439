import AppShell

// tutorial:coordinator:begin
/// Presents the second screen and finishes (leaves its parent) once it is dismissed.
final class SecondCoordinator: Coordinator {
    private let root: RootController
    private let screen: SecondScreen

    /// A flow on `root`, with a new screen or (restoring) the one already presented.
    init(root: RootController, screen: SecondScreen = SecondScreen()) {
        self.root = root
        self.screen = screen
        super.init(name: "second")
        screen.handle(by: self) { coordinator, action, _ in coordinator.handle(action) }
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
// tutorial:coordinator:end
