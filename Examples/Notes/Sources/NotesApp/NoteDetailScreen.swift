import AppShell

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
final class NoteDetailScreen: Screen<NoteDetailAction>, RestorableScreen, View {
    /// The number of the note shown.
    @SceneStorage("id") var noteID = 0

    /// A screen showing no note yet: the one restoration makes, giving `noteID` back after.
    init() { super.init(name: "note") }

    /// The screen of note `noteID`. It stays restorable: the value is kept in `@SceneStorage`,
    /// which a restart gives back to the screen it makes with `init()`.
    convenience init(noteID: Int) {
        self.init()
        self.noteID = noteID
    }

    private var note: Note? { context.flatMap { Notebook($0.userDefaults).note(noteID) } }

    var body: some View {
        Group {
            if let note {
                Text(note.body)
                Button("Delete", action: NoteDetailAction.delete).buttonStyle(.destructive)
            }
        }
        .navigationTitle(note?.title ?? "This note was deleted")
        .id(noteID)
        .toolbar { Button("‹ Notes", action: NoteDetailAction.back).buttonStyle(.back) }
    }
}
