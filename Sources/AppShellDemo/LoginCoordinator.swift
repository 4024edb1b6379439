import AppShell

/// The login flow: checks the credentials (on the password-check pool, off the session's lock),
/// and on success stores the flags, rotates the session id and hands over to the app
/// coordinator. A failure changes nothing stored.
final class LoginCoordinator: Coordinator, RestorableCoordinator {
    static let restorationIdentifier = "login"
    override class var shows: [any Restorable.Type] { [LoginScreen.self] }

    private let root: RootController
    private let environment: DemoEnvironment
    private let screen: LoginScreen
    /// Names this login flow to the throttle when no session is bound (never, for a request):
    /// made when first asked for, as most flows never need it (a visitor's session kept it,
    /// 96 bytes, from its first page on).
    private lazy var flowKey = "flow:" + SessionID.random().text
    /// Failures are also counted per session: the key is the session's id, which stays the same
    /// until a login succeeds (that rotates it), however often the app is rebuilt from its snapshot.
    private var limiterKey: String { root.sessionID.map { "session:" + $0.text } ?? flowKey }
    /// The quota place of this flow's password check under way (its answer not yet applied): held
    /// by the check's task until it ends, so a check cancelled before its answer (its client went
    /// away) frees the flow as it frees the place.
    private weak var checkUnderWay: PasswordCheckQuota.Place?
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
        guard let environment = root.environment.demo, let screen = root.child as? LoginScreen else { return nil }
        self.init(root: root, environment: environment, screen: screen)
    }

    /// Shows the login screen with a cross-dissolve.
    override func start() {
        root.transition(to: screen, animated: true)
    }

    /// `login`: checks the password off the session's lock, then `finish`es.
    private func login(
        username: String, password: String, next: String?, from clientAddress: String
    ) throws(ActionError) {
        // Where the form says the user is going: kept when this attempt fails, so the next one
        // (and the page's URL) still goes there.
        if let next, Shell.isSameSitePath(next) { self.next = next }
        var admitted = LoginThrottle.Attempt(
            sessionKey: limiterKey, username: username, clientAddress: clientAddress)
        // Admitted attempts count at once (as failures until their check says otherwise), so
        // that checks running at the same time count against each other.
        let wait = environment.throttle.admit(&admitted)
        let attempt = admitted
        guard wait == 0 else {
            throw refusal(429, "Too many failed logins. Try again in a minute.", retryAfterSeconds: Int(wait))
        }
        // One check at a time per session: its attempts stay counted one after another.
        guard checkUnderWay == nil else {
            environment.throttle.withdraw(attempt)
            throw refusal(429, "A login is already being checked. Wait for its answer.", retryAfterSeconds: 1)
        }
        // A few checks at a time per client network: no client fills the queue every login waits in.
        guard let place = environment.checkQuota.take(for: clientAddress) else {
            environment.throttle.withdraw(attempt)
            throw refusal(
                429, "Too many logins from your network are being checked. Wait for their answers.",
                retryAfterSeconds: 1)
        }
        // The check runs on the password-check pool, with no lock held; the request waits. Its
        // outcome is counted as soon as it is known, whatever happens to the session meanwhile.
        // The check keeps its place until it has run, or until it is dropped unrun; it waits in
        // its network's lane, served in turns with the others'.
        let queued = root.finishLater(on: environment.passwordChecks, lane: place.network) { [environment] in
            let valid = environment.authenticate(username: username, password: password)
            // Free before the answer: the client may log in again as soon as it has it.
            place.giveBack()
            return valid
        } settle: { [environment] valid in
            // At normal priority, off the pool's thread: other logins take the throttle's lock.
            environment.throttle.recordOutcome(attempt, succeeded: valid)
            if !valid { LoginCoordinator.logFailure(attempt, environment.throttle) }
        } then: { root, valid throws(ActionError) in
            // Other requests of the session ran meanwhile: it must still be at the login screen.
            guard let flow = (root.visibleScreen as? LoginScreen)?.coordinator as? LoginCoordinator else {
                throw ActionError(
                    status: 409, "The session left the login screen while the password was checked; nothing was done.")
            }
            try flow.finish(username: username, valid: valid)
        }
        guard queued else {
            environment.throttle.withdraw(attempt)
            throw refusal(503, "The server is busy checking other logins. Try again in a moment.", retryAfterSeconds: 1)
        }
        checkUnderWay = place
    }

    /// Applies a checked password (already counted by the throttle), under the session's lock: a
    /// success stores the flags, rotates the session id and hands over to the app coordinator; a
    /// failure changes nothing stored.
    private func finish(username: String, valid: Bool) throws(ActionError) {
        checkUnderWay = nil
        guard valid else { throw refusal(401, "Wrong username or password.") }
        let defaults = root.defaults
        defaults.set(true, forKey: "isLogin")
        defaults.set(username, forKey: "username")
        root.rotateSessionID()
        (parent as? AppCoordinator)?.showMain()
    }

    /// Logs a failed login, and the lockout it caused when it made the attempt's keys reach a
    /// limit (later attempts are refused before any check, and not logged one by one): the
    /// username and the client, never the password.
    private static func logFailure(_ attempt: LoginThrottle.Attempt, _ throttle: LoginThrottle) {
        AccessLog.security("login failed", ["username": attempt.username, "client": attempt.clientAddress])
        let reached = throttle.reachedLimits(attempt)
        guard !reached.isEmpty else { return }
        AccessLog.security(
            "login lockout",
            [
                "username": attempt.username, "client": attempt.clientAddress,
                "limits": reached.joined(separator: ", "),
            ])
    }

    /// A refused attempt: the screen shows the same words the JSON answer's `error` carries, so
    /// the form (which shows the screen) and the API always say the same thing.
    private func refusal(_ status: Int, _ message: String, retryAfterSeconds: Int? = nil) -> ActionError {
        screen.message = message
        return ActionError(status: status, message, retryAfterSeconds: retryAfterSeconds)
    }
}
