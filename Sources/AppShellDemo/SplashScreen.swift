import AppShell

/// The first screen of every session (seed 000/001): it does the start-up work on the server and
/// then tells the app coordinator, which routes to main or login by the stored `isLogin` flag.
final class SplashScreen: ViewController {
    /// When the start-up work began (milliseconds since 1970).
    let startedAt: Int64

    init(startedAt: Int64) {
        self.startedAt = startedAt
        super.init(name: "splash")
    }

    override func renderHTML() -> String {
        """
        <section class="splash" aria-busy="true">
          <h1>AppShell</h1>
          <p>Starting…</p>
        </section>
        """
    }
}
