import AppShell
import AppShellHTTP
import AppShellJSON

/// The login screen's action.
enum LoginAction: String, ScreenActions {
    /// Checks the username and password; success gives the session a new id.
    case login

    var requiredParameters: [String] { ["username", "password"] }
    var role: ActionRole? { .rotatesSession }
}

/// The login screen: a username and a password, and the message of the last failed attempt.
final class LoginScreen: Screen<LoginAction>, RestorableScreen {
    /// What went wrong with the last attempt, shown until the screen goes away.
    @SceneStorage("message") var message: String?
    /// The page to open after logging in (sent back by the form). Both are kept with the screen:
    /// the same version shows the same screen when the app is made again from its snapshot (after
    /// a restart, or at another instance sharing the store).
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
            <section class="screen screen-login" aria-labelledby="login-title">
            <h1 id="login-title" tabindex="-1">Log in</h1>
            \(alert)\(form(.login, label: "Log in", fields: fields))
            </section>
            """
    }
}
