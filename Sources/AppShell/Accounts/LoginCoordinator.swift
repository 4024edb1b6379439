import AppShellAuth
import AppShellHTTP

/// What a login flow's parent does once the user has logged in: the delegate of
/// `LoginCoordinator`, as a view controller's delegate is told it finished.
public protocol LoginCoordinatorDelegate: AnyObject {
    /// `login` let its user in: the session holds who is logged in (`RootController.username`)
    /// and has a new id. Show what a logged-in user sees; the page the user asked for before
    /// logging in (`next`) is opened after this by the framework.
    func loginCoordinatorDidLogIn(_ login: LoginCoordinator)
}

/// The framework's login flow: its screen, the throttle, the password check on the
/// password-check threads (off the session's lock), and on success who is logged in and a new
/// session id. A failure changes nothing stored. An app shows it from its app coordinator, whose
/// `shows` lists it, and is told of a login as the flow's parent (`LoginCoordinatorDelegate`):
///
/// ```swift
/// func showLogin() {
///     let login = LoginCoordinator(root: root)
///     addChild(login)
///     login.start()
/// }
///
/// extension AppCoordinator: LoginCoordinatorDelegate {
///     func loginCoordinatorDidLogIn(_ login: LoginCoordinator) { showMain() }
/// }
/// ```
public final class LoginCoordinator: Coordinator, RestorableCoordinator {
    /// The flow's name in the coordinator tree and its snapshot.
    public static let restorationIdentifier = "login"
    /// The login screen, and the sign-up screen it leads to.
    public override class var shows: [any Restorable.Type] { [LoginScreen.self, SignUpScreen.self] }

    private let root: RootController
    private let accounts: Accounts
    private let screen: LoginScreen
    /// The sign-up screen, made when it is first shown.
    private var signUpScreen: SignUpScreen?
    /// Names this login flow to the throttle when no session is bound (never, for a request):
    /// made when first asked for, as most flows never need it.
    private lazy var flowKey = "flow:" + SessionID.random().text
    /// Failures are also counted per session: the key is the session's id, which stays the same
    /// until a login succeeds (that rotates it), however often the app is rebuilt from its snapshot.
    private var limiterKey: String { root.sessionID.map { "session:" + $0.text } ?? flowKey }
    /// The place of this flow's password check under way: given back once the check ran (or was
    /// dropped, its client gone), which frees the flow for the next attempt, whatever becomes of
    /// the answer.
    private weak var checkUnderWay: PasswordCheckQuota.Place?

    /// The page asked for before logging in (the form sends it back as `next`).
    public var next: String? {
        get { signUpScreen?.next ?? screen.next }
        set {
            screen.next = newValue
            signUpScreen?.next = newValue
        }
    }

    /// A login flow on `root` with a new login screen; the server's accounts
    /// (`root.environment.accounts`) say who can log in.
    public convenience init(root: RootController) {
        guard let accounts = root.environment.accounts else {
            preconditionFailure("LoginCoordinator needs the server's accounts (root.environment.accounts)")
        }
        self.init(root: root, accounts: accounts, screen: LoginScreen())
    }

    /// The flow of the login or sign-up screen a snapshot restored.
    public convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let accounts = root.environment.accounts else { return nil }
        if let screen = root.child as? LoginScreen {
            self.init(root: root, accounts: accounts, screen: screen)
        } else if let signUp = root.child as? SignUpScreen {
            self.init(root: root, accounts: accounts, screen: LoginScreen())
            signUpScreen = own(signUp)
        } else {
            return nil
        }
    }

    private init(root: RootController, accounts: Accounts, screen: LoginScreen) {
        self.root = root
        self.accounts = accounts
        self.screen = screen
        super.init(name: Self.restorationIdentifier)
        handle(LoginAction.self) { [unowned self] action, request throws(ActionError) in
            switch action {
            case .login(let username, let password, let next):
                try login(username: username, password: password, next: next, from: request.clientAddress)
            case .createAccount:
                try showSignUp()
            }
        }
        handle(SignUpAction.self) { [unowned self] action, request throws(ActionError) in
            switch action {
            case .signUp(let username, let password, let next):
                try signUp(username: username, password: password, next: next, from: request.clientAddress)
            case .logIn:
                screen.next = signUpScreen?.next ?? screen.next
                root.transition(to: screen, animated: true)
            }
        }
        own(screen)
    }

    /// Shows the login screen with a cross-dissolve.
    public override func start() {
        root.transition(to: screen, animated: true)
    }

    /// `login`: counts the attempt, then checks the password off the session's lock; the request's
    /// answer waits for `finish`.
    private func login(
        username: String, password: String, next: String?, from clientAddress: String
    ) throws(ActionError) {
        // Where the form says the user is going: kept when this attempt fails, so the next one
        // (and the page's URL) still goes there.
        if let next, RequestChecks.isSameSitePath(next) { self.next = next }
        do throws(ActionError) {
            checkUnderWay = try accounts.runCheck(
                on: root, sessionKey: limiterKey, username: username, clientAddress: clientAddress,
                busy: checkUnderWay?.isGivenBack == false
            ) { [accounts] in
                PasswordVerdict { () throws(StoreError) in
                    try accounts.authenticate(username: username, password: password)
                }
            } outcome: {
                $0.outcome
            } then: { root, verdict throws(ActionError) in
                // Other requests of the session ran meanwhile: it must still be at the login screen.
                guard let flow = (root.visibleScreen as? LoginScreen)?.coordinator as? LoginCoordinator else {
                    throw ActionError(
                        status: 409,
                        "The session left the login screen while the password was checked; nothing was done.")
                }
                try flow.finish(username: username, verdict: verdict)
            }
        } catch {
            throw refusal(error)
        }
    }

    /// Applies a checked password (already counted by the throttle), under the session's lock: a
    /// success logs the user in (a new session id) and tells the parent; a failure changes
    /// nothing stored.
    private func finish(username: String, verdict: PasswordVerdict) throws(ActionError) {
        checkUnderWay = nil
        switch verdict {
        case .right: break
        case .wrong: throw refusal(401, "Wrong username or password.")
        case .unavailable: throw refusal(PasswordVerdict.unavailableError)
        }
        // Right: the name is a valid account name.
        root.logIn(as: (try? AccountName(username))?.text ?? username)
        (parent as? LoginCoordinatorDelegate)?.loginCoordinatorDidLogIn(self)
    }

    // MARK: Sign-up

    /// `createAccount`: the sign-up screen, when the server allows sign-up.
    private func showSignUp() throws(ActionError) {
        guard accounts.allowsSignUp else {
            throw refusal(403, "This server does not let visitors make accounts; ask its operator for one.")
        }
        let signUp = signUpScreen ?? own(SignUpScreen())
        signUpScreen = signUp
        signUp.next = screen.next
        signUp.message = nil
        root.transition(to: signUp, animated: true)
    }

    /// `signUp`: checks the name and the password against the rules, counts the attempt as a
    /// login's (the throttle, the client network's place in the checks) and against the network's
    /// sign-ups this hour, then makes the password's hash and the account on the password-check
    /// threads, off the session's lock; `finishSignUp` logs the session in.
    private func signUp(
        username: String, password: String, next: String?, from clientAddress: String
    ) throws(ActionError) {
        guard accounts.allowsSignUp else {
            throw refusal(403, "This server does not let visitors make accounts; ask its operator for one.")
        }
        if let next, RequestChecks.isSameSitePath(next) { self.next = next }
        let name: AccountName
        do throws(CredentialError) {
            name = try AccountName(username)
            try PasswordRule.check(password)
        } catch {
            throw signUpRefusal(422, error.sentence)
        }
        let network = PasswordCheckQuota.network(of: clientAddress)
        let signUpKey = "signup:" + network
        guard !accounts.signUps.isBlocked(keys: [signUpKey]) else {
            throw signUpRefusal(
                429, "Too many accounts were made from your network this hour. Try again later.",
                retryAfterSeconds: Int(max(1, accounts.signUps.secondsUntilUnblocked(keys: [signUpKey]))))
        }
        let now = root.environment.now
        do throws(ActionError) {
            checkUnderWay = try accounts.runCheck(
                on: root, sessionKey: limiterKey, username: name.text, clientAddress: clientAddress,
                busy: checkUnderWay?.isGivenBack == false
            ) { [accounts] () -> SignUpOutcome in
                guard let hash = try? PasswordHash.make(password: password) else { return SignUpOutcome.failed }
                let made: Bool
                do throws(StoreError) {
                    made = try accounts.insert(name, passwordHash: hash, now: now / 1000)
                } catch {
                    Logger.appshell.error("accounts: \(error)")
                    return SignUpOutcome.unavailable
                }
                guard made else { return SignUpOutcome.taken }
                accounts.signUps.recordFailure(keys: [signUpKey])
                AccessLog.security("account made", ["username": name.text, "client": clientAddress])
                return SignUpOutcome.made
            } outcome: { outcome in
                switch outcome {
                case .made: .succeeded
                case .taken: .failed
                case .failed, .unavailable: .notChecked
                }
            } then: { root, outcome throws(ActionError) in
                guard let flow = (root.visibleScreen as? SignUpScreen)?.coordinator as? LoginCoordinator else {
                    throw ActionError(
                        status: 409, "The session left the sign-up screen while the account was made; log in with it.")
                }
                try flow.finishSignUp(name: name.text, outcome: outcome)
            }
        } catch {
            throw signUpRefusal(error.status, error.message, retryAfterSeconds: error.retryAfterSeconds)
        }
    }

    /// What making an account came to.
    private enum SignUpOutcome: Sendable {
        case made, taken, failed, unavailable
    }

    /// Applies a sign-up under the session's lock: a new account logs the session in as it (a new
    /// session id) and tells the parent; a taken name or a failure changes nothing stored.
    private func finishSignUp(name: String, outcome: SignUpOutcome) throws(ActionError) {
        checkUnderWay = nil
        switch outcome {
        case .taken:
            throw signUpRefusal(409, "The username \(name) is taken. Choose another.")
        case .failed:
            throw signUpRefusal(500, "The account could not be made. Try again.")
        case .unavailable:
            throw signUpRefusal(
                PasswordVerdict.unavailableError.status, PasswordVerdict.unavailableError.message,
                retryAfterSeconds: PasswordVerdict.unavailableError.retryAfterSeconds)
        case .made:
            root.logIn(as: name)
            (parent as? LoginCoordinatorDelegate)?.loginCoordinatorDidLogIn(self)
        }
    }

    /// A refused sign-up, shown on the sign-up screen with the words of the JSON answer's `error`.
    private func signUpRefusal(_ status: Int, _ message: String, retryAfterSeconds: Int? = nil) -> ActionError {
        signUpScreen?.message = message
        return ActionError(status: status, message, retryAfterSeconds: retryAfterSeconds)
    }

    /// A refused attempt: the screen shows the same words the JSON answer's `error` carries, so
    /// the form (which shows the screen) and the API always say the same thing.
    private func refusal(_ status: Int, _ message: String, retryAfterSeconds: Int? = nil) -> ActionError {
        refusal(ActionError(status: status, message, retryAfterSeconds: retryAfterSeconds))
    }

    /// `error`, shown on the login screen.
    private func refusal(_ error: ActionError) -> ActionError {
        screen.message = error.message
        return error
    }
}
