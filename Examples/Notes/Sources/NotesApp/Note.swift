import AppShell

/// One note: its number in the user's notebook, its title and its text.
public struct Note: Sendable, Equatable {
    /// The note's number, its URL's last part (`/notes/3`); never reused.
    public let id: Int
    /// A line of at most `Notebook.maxTitleLength` characters, never empty.
    public let title: String
    /// The text, at most `Notebook.maxBodyLength` characters, possibly empty.
    public let body: String

    /// The note as the user's store keeps it: a dictionary, as you would put in `UserDefaults`.
    var stored: DefaultsValue {
        .dictionary(["id": .integer(id), "title": .string(title), "body": .string(body)])
    }

    /// A note from what the store kept, or `nil` when it is not one.
    init?(stored: DefaultsValue) {
        guard case .dictionary(let fields) = stored, case .integer(let id)? = fields["id"],
            case .string(let title)? = fields["title"], case .string(let body)? = fields["body"]
        else { return nil }
        self.init(id: id, title: title, body: body)
    }

    /// A note with these parts.
    public init(id: Int, title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }
}

/// The notes of the user logged in, kept in the user's store (`root.userDefaults`, the
/// `UserDefaults` API, shared by every session of the user): under `notes` (newest first) with the
/// next number under `notes.nextID`. They are committed with the request that changed them, shown
/// at once in the user's other browsers, and kept by a restart. The user's first login adds a
/// welcome note (number 1).
public struct Notebook {
    /// The longest title, in characters.
    public static let maxTitleLength = 100
    /// The longest text, in characters.
    public static let maxBodyLength = 2000
    /// The most notes one user keeps.
    public static let maxNotes = 100

    let defaults: DefaultsStore

    /// The notebook in `store`, the logged-in user's store (`root.userDefaults`); logged out
    /// (`nil`), an empty notebook that keeps nothing.
    init(_ store: DefaultsStore?) {
        defaults = store ?? DefaultsStore()
    }

    private let key = "notes"
    private let nextIDKey = "notes.nextID"

    /// Every note, newest first.
    public var notes: [Note] {
        guard case .array(let values)? = defaults.value(forKey: key) else { return [] }
        return values.compactMap(Note.init(stored:))
    }

    /// The note numbered `id`, if the user has it.
    public func note(_ id: Int) -> Note? { notes.first { $0.id == id } }

    /// Adds the welcome note the first time this user logs in.
    func welcomeOnce() {
        guard defaults.value(forKey: nextIDKey) == nil else { return }
        defaults.set(1, forKey: nextIDKey)
        _ = try? add(
            title: "Welcome to Notes",
            body: "Each note has its own address: this one is /notes/1. Open it from a bookmark and Notes logs you in "
                + "first, then shows it.")
    }

    /// Checks `title` and `body` and keeps them as a new note. Refuses (422, nothing stored) an
    /// empty title, a title or text over its limit, or a full notebook.
    @discardableResult
    func add(title: String, body: String) throws(ActionError) -> Note {
        let title = Notebook.trimmed(title)
        guard !title.isEmpty else { throw ActionError(status: 422, "A note needs a title.") }
        guard title.count <= Notebook.maxTitleLength else {
            throw ActionError(
                status: 422,
                "The title is \(title.count) characters long; at most \(Notebook.maxTitleLength) are kept.")
        }
        guard body.count <= Notebook.maxBodyLength else {
            throw ActionError(
                status: 422, "The text is \(body.count) characters long; at most \(Notebook.maxBodyLength) are kept.")
        }
        let notes = self.notes
        guard notes.count < Notebook.maxNotes else {
            throw ActionError(
                status: 422, "You have \(Notebook.maxNotes) notes, the most Notes keeps. Delete one first.")
        }
        let id = max(defaults.integer(forKey: nextIDKey), 1)
        let note = Note(id: id, title: title, body: body)
        defaults.set(id + 1, forKey: nextIDKey)
        defaults.set(.array([note.stored] + notes.map(\.stored)), forKey: key)
        return note
    }

    /// Removes the note numbered `id` (nothing when there is none).
    func delete(_ id: Int) {
        let kept = notes.filter { $0.id != id }
        defaults.set(.array(kept.map(\.stored)), forKey: key)
    }

    /// `text` without the white space around it.
    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
