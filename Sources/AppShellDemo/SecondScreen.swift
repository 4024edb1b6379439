import AppShell

/// What the second screen offers; any other action gets 409 while it is visible.
enum SecondAction: String, ScreenActions {
    /// Closes the screen.
    case dismiss

    var role: ActionRole? { .close }
}

/// A screen presented modally from main, with a close button.
final class SecondScreen: Screen<SecondAction>, RestorableScreen, View {
    init() { super.init(name: "second") }

    var body: some View {
        Text("A modal screen. Close it to go back.")
        Button("Close", action: SecondAction.dismiss)
    }
}
