import AppShell
import AppShellHTTP

/// What the list of notes offers.
enum NoteListAction: String, ScreenActions {
    /// Pushes the note numbered `id`.
    case open
    /// Presents the compose sheet.
    case compose
    /// Logs out: the session gets a new id.
    case logout

    var requiredParameters: [String] { self == .open ? ["id"] : [] }
    var role: ActionRole? { self == .logout ? .rotatesSession : nil }
}

/// The user's notes, newest first: the bottom of the navigation stack.
final class NoteListScreen: Screen<NoteListAction>, RestorableScreen {
    init() { super.init(name: "notes") }

    override var title: String { "Notes" }

    override func renderHTML() -> String {
        let notes = context.map { Notebook(defaults: $0.defaults).notes } ?? []
        let items = notes.map { note in
            "<li>"
                + form(.open, label: note.title, fields: "<input type=\"hidden\" name=\"id\" value=\"\(note.id)\">\n")
                + "</li>"
        }
        let list =
            items.isEmpty
            ? "<p class=\"empty\">No notes yet.</p>" : "<ul class=\"notes\">\n\(items.joined(separator: "\n"))\n</ul>"
        return """
            <section class="screen notes" aria-labelledby="notes-title">
            <h1 id="notes-title" tabindex="-1">Notes</h1>
            <nav class="toolbar" aria-label="Notes">
            \(form(.compose, label: "New note", buttonClass: "primary"))
            \(form(.logout, label: "Log out"))
            </nav>
            \(list)
            </section>
            """
    }
}
