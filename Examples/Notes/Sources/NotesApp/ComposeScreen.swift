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
    /// Why the last `save` was refused.
    var message: String?
    /// What the refused `save` sent, put back in the fields.
    var draft = (title: "", body: "")

    init() { super.init(name: "compose") }

    /// A refused draft and why, kept in the snapshot so that the sheet comes back as it was.
    var restorationState: JSON? {
        guard let message else { return nil }
        return ["message": .string(message), "title": .string(draft.title), "body": .string(draft.body)]
    }

    /// Takes the refused draft back after a restart.
    func restore(from state: JSON) {
        message = state["message"]?.stringValue
        draft = (state["title"]?.stringValue ?? "", state["body"]?.stringValue ?? "")
    }

    override var title: String { "New note" }

    override func state() -> JSON? { message.map { ["message": .string($0)] } }

    override func renderHTML() -> String {
        let alert = message.map { "<p class=\"message\" role=\"alert\">\(HTML.escape($0))</p>\n" } ?? ""
        let fields = """
            <label for="title">Title</label>
            <input id="title" name="title" value="\(HTML.escape(draft.title))" maxlength="\(Notebook.maxTitleLength)" required>
            <label for="body">Text</label>
            <textarea id="body" name="body" rows="8" maxlength="\(Notebook.maxBodyLength)">\(HTML.escape(draft.body))</textarea>

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
