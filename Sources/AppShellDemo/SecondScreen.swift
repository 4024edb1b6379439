import AppShell

/// What the second screen offers; any other action gets 409 while it is visible.
enum SecondAction: String, ScreenActions {
    /// Closes the screen.
    case dismiss

    var role: ActionRole? { .close }
}

/// A screen presented modally from main, with a close button.
final class SecondScreen: Screen<SecondAction>, RestorableScreen {
    init() { super.init(name: "second") }

    override func renderHTML() -> String {
        """
        <section class="screen screen-second" role="dialog" aria-modal="true" aria-labelledby="second-title">
        <h1 id="second-title" tabindex="-1">Second</h1>
        <p>A modal screen. Close it to go back.</p>
        \(form(.dismiss, label: "Close"))
        </section>
        """
    }
}
