import AppShell

/// A screen pushed from main (and the one a notification launch opens).
final class ListScreen: ViewController {
    init() { super.init(name: "list") }

    override var actions: [String] { ["pop"] }

    override func renderHTML() -> String {
        """
        <section class="screen screen-list" aria-labelledby="list-title">
        <h1 id="list-title" tabindex="-1">List</h1>
        <ul>
        <li>First item</li>
        <li>Second item</li>
        <li>Third item</li>
        </ul>
        \(context?.form("pop", label: "Back") ?? "")
        </section>
        """
    }
}
