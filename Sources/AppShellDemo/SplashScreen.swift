import AppShell
import AppShellHTTP

/// The first screen of every session (seed 000/001): it does the start-up work on the server and
/// then tells the app coordinator, which routes to main or login by the stored `isLogin` flag.
final class SplashScreen: ViewController, RestorableScreen {
    init() { super.init(name: "splash") }

    override var title: String { "Starting" }

    override func renderHTML() -> String {
        let image = context?.assetURL("splash.svg") ?? "/splash.svg"
        return """
            <section class="screen screen-splash" aria-labelledby="splash-title" aria-busy="true">
            <img src="\(HTML.escape(image))" alt="" width="96" height="96">
            <h1 id="splash-title" tabindex="-1">AppShell</h1>
            <p>Starting…</p>
            </section>
            """
    }
}
