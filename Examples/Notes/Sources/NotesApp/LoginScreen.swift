import AppShell

/// What the login screen offers.
enum LoginAction: ScreenActions {
    /// Checks `username` and `password`; success gives the session a new id and opens `next`.
    case login(username: String, password: String, next: String?)

    /// The demo account: the sample is the API document's example (what its stateful tests send).
    static let allCases: [LoginAction] = [.login(username: "demo", password: "notes", next: nil)]

    var role: ActionRole? { .rotatesSession }
}

/// A username, a password, and the message of the last refused attempt.
final class LoginScreen: Screen<LoginAction>, RestorableScreen, View {
    /// Why the last attempt was refused, shown until the screen goes away (`view.message`).
    @SceneStorage("message") var message: String?
    /// The page to open after logging in (a deep link), sent back by the form. Both are kept with
    /// the screen across a restart.
    @SceneStorage("next") var next: String?

    init() { super.init(name: "login") }

    /// The page's title (the heading names the app).
    override var title: String { "Log in" }

    var body: some View {
        if let message { Message(message) }
        Form(action: LoginAction.login, submitLabel: "Log in") {
            TextField("Username", name: "username").textContentType(.username).required()
            SecureField("Password", name: "password").required()
            if let next { HiddenField(name: "next", value: next) }
        }
        .navigationTitle("Log in to Notes")
    }
}
