import AppShell

/// The list's actions.
enum ListAction: String, ScreenActions {
    /// Back to main.
    case pop

    var role: ActionRole? { .back }
}

/// A screen pushed from main (and the one a notification launch opens).
final class ListScreen: Screen<ListAction>, RestorableScreen {
    init() { super.init(name: "list") }

    override func renderHTML() -> String {
        """
        <section class="screen screen-list" aria-labelledby="list-title">
        <h1 id="list-title" tabindex="-1">List</h1>
        <ul>
        <li>First item</li>
        <li>Second item</li>
        <li>Third item</li>
        </ul>
        \(form(.pop, label: "Back"))
        </section>
        """
    }
}
