/// The sign-up screen's actions.
public enum SignUpAction: ScreenActions {
    /// Makes an account named `username` with `password` and logs the session in as it (a new
    /// session id), then opens `next`.
    case signUp(username: String, password: String, next: String?)
    /// Back to the login screen.
    case logIn

    /// One sample of each: the API document's examples.
    public static let allCases: [SignUpAction] = [
        .signUp(username: "new.user", password: "a long passphrase", next: nil), .logIn,
    ]

    /// A sign-up logs the session in: it gets a new id, and the page starts its event stream again.
    public var role: ActionRole? {
        switch self {
        case .signUp: .rotatesSession
        case .logIn: nil
        }
    }
}

/// The framework's sign-up screen, shown by the login flow when the server allows sign-up
/// (`AccountsConfiguration.signUp`): a username, a password, and what was wrong with the last
/// attempt.
public final class SignUpScreen: Screen<SignUpAction>, RestorableScreen, View {
    /// What went wrong with the last attempt, shown until the screen goes away.
    @SceneStorage("message") public var message: String?
    /// The page to open once signed up (sent back by the form).
    @SceneStorage("next") public var next: String?

    /// The rules of a name and a password, as the screen shows them (`AccountName`, `PasswordRule`).
    static let rules =
        "A username is 1 to \(AccountName.maximumLength) letters a–z, digits, dots, dashes or underscores, "
        + "starting with a letter or a digit. A password has at least \(PasswordRule.minimumCharacters) characters."

    /// A sign-up screen with no message.
    public init() { super.init(name: "signup") }

    /// The message, the form with the rules it checks, and the way back to login.
    public var body: some View {
        if let message { Message(message) }
        Form(action: SignUpAction.signUp, submitLabel: "Create the account") {
            TextField("Username", name: "username").textContentType(.username).required()
            SecureField("Password", name: "password").textContentType(.newPassword).required()
            if let next { HiddenField(name: "next", value: next) }
        }
        .navigationTitle("Create an account")
        Text(SignUpScreen.rules)
        Button("I have an account: log in", action: SignUpAction.logIn)
    }
}
