import AppShell
import AppShellHTTP
import AppShellJSON

/// What the compose sheet offers.
enum ComposeAction: String, ScreenActions {
    /// Keeps a new note: `title` (1 to 100 characters) and `body` (at most 2000).
    case save
    /// Closes the sheet, keeping nothing.
    case cancel

    var requiredParameters: [String] { self == .save ? ["title", "body"] : [] }
    var role: ActionRole? { self == .cancel ? .close : nil }
}

/// A sheet presented over the list to write a new note. A refused `save` keeps what was typed and
/// says why (`view.message`).
final class ComposeScreen: Screen<ComposeAction>, RestorableScreen {
    /// Why the last `save` was refused. It and the refused draft are kept with the sheet, so that
    /// it comes back as it was after a restart.
    @SceneStorage("message") var message: String?
    /// The title the refused `save` sent, put back in its field.
    @SceneStorage("title") var draftTitle = ""
    /// The text the refused `save` sent, put back in its field.
    @SceneStorage("body") var draftBody = ""

    init() { super.init(name: "compose") }

    override var title: String { "New note" }

    override func state() -> JSON? { message.map { ["message": .string($0)] } }

    override func renderHTML() -> String {
        let alert = message.map { "<p class=\"message\" role=\"alert\">\(HTML.escape($0))</p>\n" } ?? ""
        let fields = """
            <label for="title">Title</label>
            <input id="title" name="title" value="\(HTML.escape(draftTitle))" maxlength="\(Notebook.maxTitleLength)" required>
            <label for="body">Text</label>
            <textarea id="body" name="body" rows="8" maxlength="\(Notebook.maxBodyLength)">\(HTML.escape(draftBody))</textarea>

            """
        return """
            <section class="screen compose" role="dialog" aria-modal="true" aria-labelledby="compose-title">
            <h1 id="compose-title" tabindex="-1">New note</h1>
            \(alert)\(form(.save, label: "Save", fields: fields, buttonClass: "primary"))
            \(form(.cancel, label: "Cancel"))
            </section>
            """
    }
}
