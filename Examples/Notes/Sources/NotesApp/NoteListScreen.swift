import AppShell

/// What the list of notes offers.
enum NoteListAction: ScreenActions {
    /// Pushes the note numbered `id`.
    case open(id: Int)
    /// Presents the compose sheet.
    case compose
    /// Presents the framework's account screen: the password, log out everywhere.
    case account
    /// Logs out: the session gets a new id.
    case logout

    /// One sample of each case: the API document's examples (the welcome note is 1).
    static let allCases: [NoteListAction] = [.open(id: 1), .compose, .account, .logout]

    var role: ActionRole? {
        if case .logout = self { return .rotatesSession }
        return nil
    }
}

/// The user's notes, newest first: the bottom of the navigation stack.
final class NoteListScreen: Screen<NoteListAction>, RestorableScreen, View {
    init() { super.init(name: "notes") }

    override var title: String { "Notes" }

    var body: some View {
        let notes = context.map { Notebook($0.userDefaults).notes } ?? []
        Group {
            if notes.isEmpty {
                Text("No notes yet.").secondary()
            } else {
                List(notes) { note in
                    Button(note.title, action: NoteListAction.open(id: note.id))
                }
            }
        }
        .navigationTitle("Notes")
        .toolbar {
            Button("New note", action: NoteListAction.compose).buttonStyle(.prominent)
            Button("Account", action: NoteListAction.account)
            Button("Log out", action: NoteListAction.logout)
        }
    }
}
