import AppShell
import AppShellHTTP

/// The main screen, at the bottom of the navigation stack.
///
/// Seed 002: when it appears and the one-shot `viewType` flag is 1 (the app was launched from a
/// notification), it resets the flag and asks for the list — exactly once per launch.
final class MainScreen: ViewController {
    init() { super.init(name: "main") }

    override var actions: [String] { ["showList", "presentSecond", "logout"] }

    override func viewDidAppear(_ animated: Bool) {
        consumeLaunchFlag()
    }

    /// Pushes the list when the app was launched from a notification, and clears the flag.
    func consumeLaunchFlag() {
        guard let defaults = context?.defaults, defaults.integer(forKey: "viewType") == 1 else { return }
        defaults.set(0, forKey: "viewType")
        try? report(ScreenAction(name: "showList"))
    }

    override func renderHTML() -> String {
        let user = context?.defaults.string(forKey: "username") ?? ""
        return """
            <section class="main">
              <h1>Welcome, \(HTML.escape(user))</h1>
              <button type="button" data-action="showList">Show the list</button>
              <button type="button" data-action="presentSecond">Present the second screen</button>
              <button type="button" data-action="logout">Log out</button>
            </section>
            """
    }
}
