import AppShell

/// The first screen of every session: it shows while the app starts, then the app coordinator
/// routes to the notes or to login. It offers no action.
final class SplashScreen: ViewController, RestorableScreen {
    init() { super.init(name: "splash") }

    override var title: String { "Opening" }

    override func renderHTML() -> String {
        """
        <section class="screen splash" aria-labelledby="splash-title" aria-busy="true">
        <h1 id="splash-title" tabindex="-1">Notes</h1>
        <p>Opening your notes…</p>
        </section>
        """
    }
}
