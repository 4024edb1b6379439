import AppShell
import AppShellHTTP
import AppShellJSON

/// The login screen: a username and a password, and the message of the last failed attempt.
final class LoginScreen: ViewController {
    /// What went wrong with the last attempt, shown until the screen goes away.
    var message: String?

    init() { super.init(name: "login") }

    override var actions: [String] { ["login"] }

    override func state() -> JSON? { message.map { ["message": .string($0)] } }

    override func renderHTML() -> String {
        let alert = message.map { "<p class=\"message\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        return """
            <section class="login">
              <h1>Log in</h1>
              \(alert)
              <form method="post" action="/api/actions" data-action="login">
                <label for="username">Username</label>
                <input id="username" name="username" autocomplete="username" required>
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button type="submit">Log in</button>
              </form>
            </section>
            """
    }
}
