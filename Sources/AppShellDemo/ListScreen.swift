import AppShell

/// The list's actions.
enum ListAction: String, ScreenActions {
    /// Back to main.
    case pop

    var role: ActionRole? { .back }
}

/// A screen pushed from main (and the one a notification launch opens).
final class ListScreen: Screen<ListAction>, RestorableScreen, View {
    init() { super.init(name: "list") }

    var body: some View {
        List {
            Text("First item")
            Text("Second item")
            Text("Third item")
        }
        Button("Back", action: ListAction.pop)
    }
}
