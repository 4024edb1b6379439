import AppShell

// tutorial:coordinator:begin
/// Presents the second screen and finishes (leaves its parent) once it is dismissed.
final class SecondCoordinator: Coordinator, ScreenActionHandler {
    private let root: RootController
    private let screen: SecondScreen

    /// A flow on `root`, with a new screen or (restoring) the one already presented.
    init(root: RootController, screen: SecondScreen = SecondScreen()) {
        self.root = root
        self.screen = screen
        super.init(name: "second")
        screen.actionHandler = self
    }

    /// Presents the screen modally.
    override func start() { start(animated: true) }

    /// Presents the screen, animated or not (opening its URL directly).
    func start(animated: Bool) {
        root.present(screen, animated: animated)
    }

    /// `dismiss`: closes the screen, then finishes.
    func screen(_ screen: any PageRenderer, didRequest action: ScreenAction) throws(ActionError) {
        guard action.name == "dismiss" else { throw ActionError(status: 409, "second does not offer \(action.name)") }
        root.dismiss(animated: true) { [self] in finish() }
    }
}
// tutorial:coordinator:end
