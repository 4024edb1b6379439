import AppShell
import AppShellHTTP
import AppShellJSON

/// What a note's screen offers.
enum NoteDetailAction: String, ScreenActions {
    /// Back to the list.
    case back
    /// Deletes the note, then back to the list.
    case delete

    var role: ActionRole? { self == .back ? .back : nil }
}

/// One note, pushed on the list. Which note it shows (`noteID`) is kept with the screen, as
/// SwiftUI's `@SceneStorage`: it comes back after a restart.
final class NoteDetailScreen: Screen<NoteDetailAction>, RestorableScreen {
    /// The number of the note shown.
    @SceneStorage("id") var noteID = 0

    init() { super.init(name: "note") }

    private var note: Note? { context.flatMap { Notebook(defaults: $0.defaults).note(noteID) } }

    override var title: String { note?.title ?? "Note" }

    /// The note in `GET /api/state`'s `view`.
    override func state() -> JSON? {
        guard let note else { return ["id": .integer(noteID), "deleted": true] }
        return ["id": .integer(note.id), "title": .string(note.title), "body": .string(note.body)]
    }

    override func renderHTML() -> String {
        let content =
            note.map {
                "<h1 id=\"note-title\" tabindex=\"-1\">\(HTML.escape($0.title))</h1>\n<p class=\"body\">\(HTML.escape($0.body))</p>"
            }
            ?? "<h1 id=\"note-title\" tabindex=\"-1\">This note was deleted</h1>"
        return """
            <section class="screen note" aria-labelledby="note-title">
            \(form(.back, label: "‹ Notes", buttonClass: "back"))
            \(content)
            \(note == nil ? "" : form(.delete, label: "Delete", buttonClass: "danger"))
            </section>
            """
    }
}
