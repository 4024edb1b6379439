import AppShell

/// What the about screen offers: back to the screen it was pushed from.
enum AboutAction: String, CoordinatedActions {
    /// Goes back (the browser's back button sends it too).
    case back

    var role: ActionRole? { .back }

    /// Pops the about screen off its coordinator's stack.
    func perform(on owner: TutorialCoordinator, _ request: ScreenAction) throws(ActionError) {
        owner.root.navigation?.pop(animated: true)
    }
}

/// A screen that says what the app is, pushed from home.
final class AboutScreen: Screen<AboutAction>, RestorableScreen {
    init() { super.init(name: "about") }

    override var title: String { "About" }

    override func renderHTML() -> String {
        """
        <section class="screen screen-about" aria-labelledby="about-title">
        <h1 id="about-title" tabindex="-1">About</h1>
        <p>An app built on AppShell.</p>
        \(form(.back, label: "Back"))
        </section>
        """
    }
}
