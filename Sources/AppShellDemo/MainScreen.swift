import AppShell
import AppShellHTTP

/// What main offers.
enum MainAction: String, ScreenActions {
    case showList, presentSecond, remind, logout

    var role: ActionRole? { self == .logout ? .rotatesSession : nil }
}

/// The main screen, at the bottom of the navigation stack.
///
/// Seed 002: when it appears and the one-shot `viewType` flag is 1 (the app was launched from a
/// notification), it resets the flag and asks for the list — exactly once per launch.
final class MainScreen: Screen<MainAction>, RestorableScreen {
    /// The one-shot launch flag: 1 after a launch from a notification, until main consumes it.
    @AppStorage("viewType") var viewType = 0
    /// Who logged in.
    @AppStorage("username") var username = ""

    init() { super.init(name: "main") }

    override func viewDidAppear(_ animated: Bool) {
        consumeLaunchFlag()
    }

    /// Pushes the list when the app was launched from a notification, and clears the flag.
    func consumeLaunchFlag() {
        guard viewType == 1 else { return }
        viewType = 0
        try? report(.showList)
    }

    override var title: String { "Main" }

    override func renderHTML() -> String {
        let forms: [(MainAction, String)] = [
            (.showList, "Show the list"), (.presentSecond, "Present the second screen"),
            (.remind, "Remind me in 5 seconds"), (.logout, "Log out"),
        ]
        let buttons = forms.map { form($0.0, label: $0.1) }.joined(separator: "\n")
        return """
            <section class="screen screen-main" aria-labelledby="main-title">
            <h1 id="main-title" tabindex="-1">Welcome, \(HTML.escape(username))</h1>
            <nav class="actions" aria-label="Main actions">
            \(buttons)
            </nav>
            </section>
            """
    }
}
