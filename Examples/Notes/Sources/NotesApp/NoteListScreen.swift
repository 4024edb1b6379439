import AppShell

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
final class NoteListScreen: Screen<NoteListAction>, RestorableScreen, View {
    init() { super.init(name: "notes") }

    override var title: String { "Notes" }

    var body: some View {
        let notes = context.map { Notebook(defaults: $0.defaults).notes } ?? []
        Group {
            if notes.isEmpty {
                Text("No notes yet.").secondary()
            } else {
                List(notes) { note in
                    Button(note.title, action: NoteListAction.open, parameters: ["id": String(note.id)])
                }
            }
        }
        .navigationTitle("Notes")
        .toolbar {
            Button("New note", action: NoteListAction.compose).buttonStyle(.prominent)
            Button("Log out", action: NoteListAction.logout)
        }
    }
}
