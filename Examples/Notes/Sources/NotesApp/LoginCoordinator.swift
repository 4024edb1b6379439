import AppShell

/// The login flow, on the framework's password mechanism: the throttle counts attempts
/// (`LoginThrottle`), the Argon2id check runs on the password-check threads with the session's
/// lock released (`RootController.finishLater`), and a success rotates the session's id.
final class LoginCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "login"
    override class var shows: [any Restorable.Type] { [LoginScreen.self] }

    private let root: RootController
    private let environment: NotesEnvironment
    private let screen: LoginScreen
    /// The page to open after logging in.
    var next: String? {
        get { screen.next }
        set { screen.next = newValue }
    }

    /// A login flow on `root`, with a new screen or (restoring) the one already shown.
    init(root: RootController, environment: NotesEnvironment, screen: LoginScreen = LoginScreen()) {
        self.root = root
        self.environment = environment
        self.screen = screen
        super.init(name: Self.restorationIdentifier)
        handle(LoginAction.self) { [unowned self] action, request throws(ActionError) in
            switch action {
            case .login(let username, let password, let next):
                try login(username: username, password: password, next: next, from: request.clientAddress)
            }
        }
        own(screen)
    }

    /// The flow of the login screen a snapshot restored, with the app's environment.
    convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let environment = root.environment.notes, let screen = root.child as? LoginScreen else { return nil }
        self.init(root: root, environment: environment, screen: screen)
    }

    /// Shows the login screen with a cross-dissolve.
    override func start() { root.transition(to: screen, animated: true) }

    /// `login`: counts the attempt, then checks the password off the session's lock; the request's
    /// answer waits for `finish`.
    private func login(
        username: String, password: String, next: String?, from clientAddress: String
    ) throws(ActionError) {
        if let next, Shell.isSameSitePath(next) { self.next = next }
        var admitted = LoginThrottle.Attempt(
            sessionKey: "session:" + (root.sessionID?.text ?? ""), username: username,
            clientAddress: clientAddress)
        let wait = environment.throttle.admit(&admitted)
        let attempt = admitted
        guard wait == 0 else {
            throw refusal(429, "Too many failed logins. Try again in a minute.", retryAfterSeconds: Int(wait))
        }
        // A few checks at a time per client network; the check keeps its place until it has run,
        // and waits in its network's lane (served in turns with the others').
        guard let place = environment.checkQuota.take(for: clientAddress) else {
            environment.throttle.withdraw(attempt)
            throw refusal(
                429, "Too many logins from your network are being checked. Wait for their answers.",
                retryAfterSeconds: 1)
        }
        let queued = root.finishLater(on: environment.passwordChecks, lane: place.network) { [environment] in
            let valid = environment.authenticate(username: username, password: password)
            place.giveBack()
            environment.throttle.recordOutcome(attempt, succeeded: valid)
            return valid
        } then: { root, valid throws(ActionError) in
            // Other requests of the session ran meanwhile: it must still be at this login screen.
            guard let flow = (root.visibleScreen as? LoginScreen)?.coordinator as? LoginCoordinator else {
                throw ActionError(status: 409, "The session left the login screen while the password was checked.")
            }
            try flow.finish(username: username, valid: valid)
        }
        guard queued else {
            environment.throttle.withdraw(attempt)
            throw refusal(503, "Notes is busy checking other logins. Try again in a moment.", retryAfterSeconds: 1)
        }
    }

    /// Applies the checked password under the session's lock: success stores who is logged in,
    /// gives the session a new id and hands over; a failure stores nothing.
    private func finish(username: String, valid: Bool) throws(ActionError) {
        guard valid else { throw refusal(401, "Wrong username or password.") }
        root.defaults.set(true, forKey: "isLogin")
        root.defaults.set(username, forKey: "username")
        Notebook(defaults: root.defaults).welcomeOnce()
        root.rotateSessionID()
        (parent as? AppCoordinator)?.showNotes(opening: next)
    }

    /// A refusal the screen shows with the same words as the JSON answer's `error`.
    private func refusal(_ status: Int, _ message: String, retryAfterSeconds: Int? = nil) -> ActionError {
        screen.message = message
        return ActionError(status: status, message, retryAfterSeconds: retryAfterSeconds)
    }
}
