/// The login screen's action.
public enum LoginAction: ScreenActions {
    /// Checks the username and password; success gives the session a new id and opens `next`.
    case login(username: String, password: String, next: String?)
    /// Shows the sign-up screen (when the server allows sign-up: `AccountsConfiguration.signUp`).
    case createAccount

    /// One sample of each: the API document's examples (a login with the demo's account is what
    /// its stateful tests send).
    public static let allCases: [LoginAction] = [
        .login(username: "demo", password: "appshell", next: nil), .createAccount,
    ]

    /// A login gives the session a new id: the page starts its event stream again after it.
    public var role: ActionRole? {
        switch self {
        case .login: .rotatesSession
        case .createAccount: nil
        }
    }
}

/// The framework's login screen: a username and a password, and the message of the last failed
/// attempt. Its look is the app's: the base stylesheet and the app's own, through its chrome.
public final class LoginScreen: Screen<LoginAction>, RestorableScreen, View {
    /// What went wrong with the last attempt, shown until the screen goes away.
    @SceneStorage("message") public var message: String?
    /// The page to open after logging in (sent back by the form). Both are kept with the screen:
    /// the same version shows the same screen when the app is made again from its snapshot (after
    /// a restart, or at another instance sharing the store).
    @SceneStorage("next") public var next: String?
    /// The server's accounts: whether it offers sign-up.
    @Environment(\.accounts) private var accounts

    /// A login screen with no message.
    public init() { super.init(name: "login") }

    /// The message, the form, and the page to open after it.
    public var body: some View {
        if let message { Message(message) }
        Form(action: LoginAction.login, submitLabel: "Log in") {
            TextField("Username", name: "username").textContentType(.username).required()
            SecureField("Password", name: "password").required()
            if let next { HiddenField(name: "next", value: next) }
        }
        .navigationTitle("Log in")
        if accounts?.allowsSignUp == true {
            Button("Create an account", action: LoginAction.createAccount)
        }
    }
}
