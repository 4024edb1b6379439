import AppShell
import AppShellJSON
import AppShellSessions

/// The login flow: checks the credentials, and on success stores the flags, rotates the session
/// id and hands over to the app coordinator. A failure changes nothing stored.
final class LoginCoordinator: Coordinator, ScreenActionHandler {
    private let root: RootController
    private let environment: DemoEnvironment
    private let screen: LoginScreen
    /// Failures are also counted per session; this key names the session to the limiter.
    private let limiterKey = "session:" + SessionID.random().text
    /// Called after a successful login.
    var onLogin: () -> Void = {}
    /// The page asked for before logging in (the form sends it back as `next`).
    var next: String? {
        get { screen.next }
        set { screen.next = newValue }
    }

    /// A login flow on `root`, with a new login screen or (restoring) the one already shown.
    init(root: RootController, environment: DemoEnvironment, screen: LoginScreen = LoginScreen()) {
        self.root = root
        self.environment = environment
        self.screen = screen
        super.init(name: "login")
        screen.actionHandler = self
    }

    /// Shows the login screen with a cross-dissolve.
    override func start() {
        root.transition(to: screen, animated: true)
    }

    func screen(_ screen: any PageRenderer, didRequest action: ScreenAction) throws(ActionError) {
        guard action.name == "login" else { throw ActionError(status: 409, "login does not offer \(action.name)") }
        guard let username = action.string("username"), let password = action.string("password") else {
            throw ActionError(status: 400, "login needs \"username\" and \"password\" strings")
        }
        let keys = [limiterKey, "ip:" + action.clientAddress]
        guard !environment.limiter.isBlocked(keys: keys) else {
            throw ActionError(status: 429, "Too many failed logins. Try again in a minute.")
        }
        guard environment.authenticate(username: username, password: password) else {
            environment.limiter.recordFailure(keys: keys)
            self.screen.message = "Wrong username or password."
            throw ActionError(status: 401, "Wrong username or password.")
        }
        environment.limiter.reset(keys: [limiterKey])
        let defaults = root.defaults
        defaults.set(true, forKey: "isLogin")
        defaults.set(username, forKey: "username")
        root.rotateSessionID()
        onLogin()
    }
}
