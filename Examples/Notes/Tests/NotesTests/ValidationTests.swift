import AppShell
import AppShellJSON
import AppShellTesting
import NotesApp
import Testing

/// `save`'s parameters: what is refused, with which status and words, and that a refusal keeps
/// nothing.
@Suite struct ValidationTests {
    static func composing(_ mode: TestMode) throws -> NotesHarness {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        try notes.act(#"{"action": "compose"}"#)
        return notes
    }

    static func save(_ notes: NotesHarness, title: String, body: String) throws -> TestResponse {
        try notes.act("save", ["title": .string(title), "body": .string(body)])
    }

    @Test(arguments: TestMode.allCases)
    func anInvalidNoteIsRefusedWithA422ThatSaysWhy(mode: TestMode) throws {
        let notes = try Self.composing(mode)
        let before = try notes.state()["defaults"]
        let long = String(repeating: "x", count: Notebook.maxTitleLength + 1)
        let cases: [(String, String, String)] = [
            ("", "text", "A note needs a title."),
            ("   \n ", "text", "A note needs a title."),
            (long, "", "The title is 101 characters long; at most 100 are kept."),
            (
                "Fine", String(repeating: "y", count: Notebook.maxBodyLength + 1),
                "The text is 2001 characters long; at most 2000 are kept."
            ),
        ]
        for (title, body, message) in cases {
            let refused = try Self.save(notes, title: title, body: body)
            #expect(refused.status == 422)
            #expect(refused.json["error"]?.stringValue == message)
            // The sheet stays up and says it too; nothing was stored.
            #expect(refused.json["presented"] == "compose")
            #expect(refused.json["view"]?["message"]?.stringValue == message)
            #expect(refused.json["defaults"] == before)
        }
        // At the limits, and with the white space around the title trimmed, it is kept.
        let title = String(repeating: "t", count: Notebook.maxTitleLength)
        let kept = try Self.save(
            notes, title: "  " + title + " ", body: String(repeating: "b", count: Notebook.maxBodyLength))
        #expect(kept.status == 200)
        #expect(kept.json["userDefaults"]?["notes"]?.arrayValue?.first?["title"]?.stringValue == title)
    }

    @Test(arguments: TestMode.allCases)
    func aMalformedSaveIsTheRequestsOwnMistake(mode: TestMode) throws {
        let notes = try Self.composing(mode)
        // A parameter missing or not a string: 400 with the error alone, as for any malformed request.
        let malformed = [
            #"{"action": "save", "title": "t"}"#: "save needs \"body\" (a string)",
            #"{"action": "save", "title": 3, "body": "b"}"#: "\"title\" of save must be a string, not 3",
        ]
        for (body, error) in malformed {
            let refused = try notes.act(body)
            #expect(refused.status == 400)
            #expect(refused.json == ["error": .string(error)])
        }
        #expect(try notes.state()["presented"] == "compose")
    }

    @Test func aNotebookHoldsAtMostItsLimit() throws {
        let notes = try Self.composing(.inProcess)
        // The welcome note is one; fill the rest.
        for index in 2...Notebook.maxNotes {
            #expect(try Self.save(notes, title: "Note \(index)", body: "").status == 200)
            try notes.act(#"{"action": "compose"}"#)
        }
        let full = try Self.save(notes, title: "One more", body: "")
        #expect(full.status == 422)
        #expect(full.json["error"] == "You have 100 notes, the most Notes keeps. Delete one first.")
    }
}
