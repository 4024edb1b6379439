import AppShell

/// What main offers.
enum MainAction: String, ScreenActions {
    case showList, presentSecond, remind, account, logout

    var role: ActionRole? {
        switch self {
        case .logout: return .rotatesSession
        case .remind: return .notifies
        case .showList, .presentSecond, .account: return nil
        }
    }
}

/// The main screen, at the bottom of the navigation stack.
///
/// Seed 002: when it appears and the one-shot `viewType` flag is 1 (the app was launched from a
/// notification), it resets the flag and asks for the list — exactly once per launch.
final class MainScreen: Screen<MainAction>, RestorableScreen, View {
    /// The one-shot launch flag: 1 after a launch from a notification, until main consumes it.
    @AppStorage("viewType") var viewType = 0
    /// Who logged in.
    @AppStorage("username") var username = ""

    init() { super.init(name: "main") }

    override func viewDidAppear(_ animated: Bool) {
        consumeLaunchFlag()
    }

    /// Pushes the list when the app was launched from a notification, and clears the flag.
    func consumeLaunchFlag() {
        guard viewType == 1 else { return }
        viewType = 0
        try? report(.showList)
    }

    /// The page's title (the heading welcomes the user).
    override var title: String { "Main" }

    var body: some View {
        Section {
            Button("Show the list", action: MainAction.showList)
            Button("Present the second screen", action: MainAction.presentSecond)
            Button("Remind me in 5 seconds", action: MainAction.remind)
            Button("Account", action: MainAction.account)
            Button("Log out", action: MainAction.logout)
        }
        .navigationTitle("Welcome, \(username)")
    }
}
