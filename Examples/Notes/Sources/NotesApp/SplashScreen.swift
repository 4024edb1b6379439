import AppShell

/// The first screen of every session: it shows while the app starts, then the app coordinator
/// routes to the notes or to login. It offers no action.
final class SplashScreen: ViewController, RestorableScreen, View {
    init() { super.init(name: "splash") }

    override var title: String { "Opening" }

    var body: some View {
        Text("Opening your notes…")
            .navigationTitle("Notes")
    }
}
