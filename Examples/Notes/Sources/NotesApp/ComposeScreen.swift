import AppShell

/// What the compose sheet offers.
enum ComposeAction: ScreenActions {
    /// Keeps a new note: `title` (1 to 100 characters) and `body` (at most 2000).
    case save(title: String, body: String)
    /// Closes the sheet, keeping nothing.
    case cancel

    /// One sample of each case: the API document's examples.
    static let allCases: [ComposeAction] = [.save(title: "Groceries", body: "milk, bread"), .cancel]

    var role: ActionRole? {
        if case .cancel = self { return .close }
        return nil
    }
}

/// A sheet presented over the list to write a new note. A refused `save` keeps what was typed and
/// says why (`view.message`).
final class ComposeScreen: Screen<ComposeAction>, RestorableScreen, View {
    /// Why the last `save` was refused. It and the refused draft are kept with the sheet, so that
    /// it comes back as it was after a restart.
    @SceneStorage("message") var message: String?
    /// The title the refused `save` sent, put back in its field.
    @SceneStorage("title") var draftTitle = ""
    /// The text the refused `save` sent, put back in its field.
    @SceneStorage("body") var draftBody = ""

    init() { super.init(name: "compose") }

    var body: some View {
        if let message { Message(message) }
        Form(action: ComposeAction.save, submitLabel: "Save") {
            TextField("Title", name: "title", text: draftTitle).maxLength(Notebook.maxTitleLength).required()
            TextEditor("Text", name: "body", text: draftBody, lines: 8).maxLength(Notebook.maxBodyLength)
        }
        .buttonStyle(.prominent)
        .navigationTitle("New note")
        Button("Cancel", action: ComposeAction.cancel)
    }
}
