import AppShell
import AppShellHTTP
import AppShellJSON

/// What the login screen offers.
enum LoginAction: String, ScreenActions {
    /// Checks `username` and `password`; success gives the session a new id.
    case login

    var requiredParameters: [String] { ["username", "password"] }
    var role: ActionRole? { .rotatesSession }
}

/// A username, a password, and the message of the last refused attempt.
final class LoginScreen: Screen<LoginAction>, RestorableScreen {
    /// Why the last attempt was refused, shown until the screen goes away (`view.message`).
    @SceneStorage("message") var message: String?
    /// The page to open after logging in (a deep link), sent back by the form. Both are kept with
    /// the screen across a restart.
    @SceneStorage("next") var next: String?

    init() { super.init(name: "login") }

    override var title: String { "Log in" }

    override func state() -> JSON? { message.map { ["message": .string($0)] } }

    override func renderHTML() -> String {
        let alert = message.map { "<p class=\"message\" role=\"alert\">\(HTML.escape($0))</p>\n" } ?? ""
        let nextField = next.map { "<input type=\"hidden\" name=\"next\" value=\"\(HTML.escape($0))\">\n" } ?? ""
        let fields = """
            <label for="username">Username</label>
            <input id="username" name="username" autocomplete="username" required>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required>
            \(nextField)
            """
        return """
            <section class="screen login" aria-labelledby="login-title">
            <h1 id="login-title" tabindex="-1">Log in to Notes</h1>
            \(alert)\(form(.login, label: "Log in", fields: fields))
            </section>
            """
    }
}
