import AppShell

/// The login screen's action.
enum LoginAction: ScreenActions {
    /// Checks the username and password; success gives the session a new id and opens `next`.
    case login(username: String, password: String, next: String?)

    /// The demo's account: the sample is the API document's example (what its stateful tests send).
    static let allCases: [LoginAction] = [.login(username: "demo", password: "appshell", next: nil)]

    var role: ActionRole? { .rotatesSession }
}

/// The login screen: a username and a password, and the message of the last failed attempt.
final class LoginScreen: Screen<LoginAction>, RestorableScreen, View {
    /// What went wrong with the last attempt, shown until the screen goes away.
    @SceneStorage("message") var message: String?
    /// The page to open after logging in (sent back by the form). Both are kept with the screen:
    /// the same version shows the same screen when the app is made again from its snapshot (after
    /// a restart, or at another instance sharing the store).
    @SceneStorage("next") var next: String?

    init() { super.init(name: "login") }

    var body: some View {
        if let message { Message(message) }
        Form(action: LoginAction.login, submitLabel: "Log in") {
            TextField("Username", name: "username").textContentType(.username).required()
            SecureField("Password", name: "password").required()
            if let next { HiddenField(name: "next", value: next) }
        }
        .navigationTitle("Log in")
    }
}
