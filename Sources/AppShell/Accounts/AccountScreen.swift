/// The account screen's actions.
public enum AccountAction: ScreenActions {
    /// Changes the password: `current` must be the account's, `new` follows `AccountRules`. The
    /// session gets a new id, and every other session of the account ends.
    case changePassword(current: String, new: String)
    /// Ends every session of the account — in every browser, on every instance — this one too.
    case logOutEverywhere
    /// Closes the screen.
    case close

    /// One sample of each: the API document's examples.
    public static let allCases: [AccountAction] = [
        .changePassword(current: "appshell", new: "a new long passphrase"), .logOutEverywhere, .close,
    ]

    /// A password change and logging out give the session a new id: the page starts its event
    /// stream again.
    public var role: ActionRole? {
        switch self {
        case .changePassword, .logOutEverywhere: .rotatesSession
        case .close: nil
        }
    }
}

/// The framework's account screen, shown by `AccountCoordinator`: who is logged in, a form to
/// change the password (the current one first), and "log out everywhere".
public final class AccountScreen: Screen<AccountAction>, RestorableScreen, View {
    /// What the last change came to (done, or what was wrong), shown until the screen goes away.
    @SceneStorage("message") public var message: String?
    /// Who is logged in.
    @AppStorage(RootController.usernameKey) private var username = ""

    /// An account screen with no message.
    public init() { super.init(name: "account") }

    /// The account's name, the message, the form, and the way back.
    public var body: some View {
        Text("Logged in as \(username).")
        if let message { Message(message) }
        Form(action: AccountAction.changePassword, submitLabel: "Change the password") {
            SecureField("Current password", name: "current").textContentType(.currentPassword).required()
            SecureField("New password", name: "new").textContentType(.newPassword).required()
        }
        .navigationTitle("Account")
        Button("Log out everywhere", action: AccountAction.logOutEverywhere)
        Button("Close", action: AccountAction.close)
    }
}
