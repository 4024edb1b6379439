import AppShell

// tutorial:screen:begin
/// A screen presented modally from main, with a close button.
final class SecondScreen: ViewController {
    init() { super.init(name: "second") }

    /// What the screen offers; any other action gets 409 while it is visible.
    override var actions: [String] { ["dismiss"] }

    override func renderHTML() -> String {
        """
        <section class="second" role="dialog" aria-labelledby="second-title">
          <h1 id="second-title">Second</h1>
          <p>A modal screen. Close it to go back.</p>
          <button type="button" data-action="dismiss">Close</button>
        </section>
        """
    }
}
// tutorial:screen:end
