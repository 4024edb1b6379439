import AppShell

/// What the about screen offers: back to the screen it was pushed from.
enum AboutAction: String, CoordinatedActions {
    /// Goes back (the browser's back button sends it too).
    case back

    var role: ActionRole? { .back }

    /// Pops the about screen off its coordinator's stack.
    func perform(on owner: TutorialCoordinator, _ request: ActionRequest) throws(ActionError) {
        owner.root.navigation?.pop(animated: true)
    }
}

/// A screen that says what the app is, pushed from home.
final class AboutScreen: Screen<AboutAction>, RestorableScreen, View {
    init() { super.init(name: "about") }

    var body: some View {
        Text("An app built on AppShell.")
        Button("Back", action: AboutAction.back)
            .navigationTitle("About")
    }
}
