import AppShell

// tutorial:screen:begin
/// A screen presented modally from main, with a close button.
final class SecondScreen: ViewController {
    init() { super.init(name: "second") }

    /// What the screen offers; any other action gets 409 while it is visible.
    override var actions: [String] { ["dismiss"] }

    override func renderHTML() -> String {
        """
        <section class="screen screen-second" role="dialog" aria-modal="true" aria-labelledby="second-title">
        <h1 id="second-title" tabindex="-1">Second</h1>
        <p>A modal screen. Close it to go back.</p>
        \(context?.form("dismiss", label: "Close") ?? "")
        </section>
        """
    }
}
// tutorial:screen:end
