import AppShell

/// The first screen of every session: it does the start-up work on the server and
/// then tells the app coordinator, which routes to main or login by the stored `isLogin` flag.
final class SplashScreen: ViewController, RestorableScreen, View {
    init() { super.init(name: "splash") }

    var body: some View {
        Image(decorative: "splash.svg").frame(width: 96, height: 96)
        Text("Starting…")
            .navigationTitle("AppShell")
    }

    /// The page's title while the app starts.
    override var title: String { "Starting" }
}
