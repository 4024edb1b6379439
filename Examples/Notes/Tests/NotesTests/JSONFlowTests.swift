import AppShellJSON
import AppShellTesting
import Testing

/// The curl walkthrough of Notes' README, through the JSON API, live and in process.
@Suite struct JSONFlowTests {
    @Test(arguments: TestMode.allCases)
    func aSessionGoesFromTheSplashToItsNotesAndBack(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        #expect(try notes.state()["screen"] == "login")

        // A wrong password answers 401 with the state, and the login screen says why.
        let refused = try notes.act(#"{"action": "login", "username": "demo", "password": "wrong"}"#)
        #expect(refused.status == 401)
        #expect(refused.json["view"]?["message"] == "Wrong username or password.")
        #expect(refused.json["defaults"] == [:])

        // The first login adds the welcome note.
        let list = try notes.act(#"{"action": "login", "username": "demo", "password": "notes"}"#)
        #expect(list.status == 200)
        #expect(list.json["screen"] == "notes")
        #expect(list.json["actions"] == ["open", "compose", "account", "logout", "launch"])
        #expect(list.json["userDefaults"]?["notes"]?.arrayValue?.first?["title"] == "Welcome to Notes")

        // The compose sheet is presented modally over the stack, with its own actions.
        let sheet = try notes.act(#"{"action": "compose"}"#)
        #expect(sheet.json["presented"] == "compose")
        #expect(sheet.json["actions"] == ["save", "cancel", "launch"])
        #expect(
            sheet.json["coordinators"] == [
                "name": "app", "children": [["name": "notes", "children": [["name": "compose", "children": []]]]],
            ])
        let saved = try notes.act(#"{"action": "save", "title": "Groceries", "body": "milk, bread"}"#)
        #expect(saved.status == 200)
        #expect(saved.json["screen"] == "notes")
        #expect(saved.json["presented"] == .null)
        #expect(saved.json["coordinators"] == ["name": "app", "children": [["name": "notes", "children": []]]])
        #expect(
            saved.json["userDefaults"]?["notes"]?.arrayValue?.first == [
                "id": 2, "title": "Groceries", "body": "milk, bread",
            ])

        // A note is pushed on the list, and pops back.
        // The id is an integer, as JSON sends it (a form sends its text, read as one).
        let detail = try notes.act(#"{"action": "open", "id": 2}"#)
        #expect(detail.json["stack"] == ["notes", "note"])
        #expect(detail.json["view"]?["id"] == 2 && detail.json["view"]?["title"] == "Groceries")
        #expect(detail.json["view"]?["content"]?.arrayValue?.first == ["type": "text", "text": "milk, bread"])
        #expect(try notes.act(#"{"action": "back"}"#).json["stack"] == ["notes"])

        // Deleting a note pops it and removes it.
        _ = try notes.act(#"{"action": "open", "id": "1"}"#)
        let deleted = try notes.act(#"{"action": "delete"}"#)
        #expect(deleted.json["stack"] == ["notes"])
        #expect(deleted.json["userDefaults"]?["notes"]?.arrayValue?.count == 1)

        // Cancel closes the sheet and keeps nothing.
        _ = try notes.act(#"{"action": "compose"}"#)
        let cancelled = try notes.act(#"{"action": "cancel"}"#)
        #expect(cancelled.json["presented"] == .null)
        #expect(cancelled.json["userDefaults"]?["notes"]?.arrayValue?.count == 1)

        // Logging out keeps the notes for the next login, and rotates the session.
        let cookie = notes.cookies
        let out = try notes.act(#"{"action": "logout"}"#)
        #expect(out.json["screen"] == "login")
        #expect(notes.cookies != cookie)
        let back = try notes.act(#"{"action": "login", "username": "demo", "password": "notes"}"#)
        #expect(back.json["userDefaults"]?["notes"]?.arrayValue?.first?["title"] == "Groceries")
    }

    @Test(arguments: TestMode.allCases)
    func actionsAreCheckedAgainstTheScreenAndTheApp(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        // An action the app has but the visible screen does not offer: 409, with the state.
        let notOffered = try notes.act(#"{"action": "save", "title": "t", "body": "b"}"#)
        #expect(notOffered.status == 409)
        #expect(notOffered.json["screen"] == "notes")
        // A name no screen of Notes has: 400, naming the known actions (derived from the screens).
        let unknown = try notes.act(#"{"action": "showList"}"#)
        #expect(unknown.status == 400)
        #expect(
            unknown.json["error"]?.stringValue?.contains(
                "account, back, cancel, changePassword, close, compose, createAccount, delete, launch, logIn, "
                    + "logOutEverywhere, login, logout, open, save, signUp") == true)
        // A missing or mistyped parameter: 400 naming it and its type; a note that is not there:
        // 404 with the state.
        let noID = try notes.act(#"{"action": "open"}"#)
        #expect(noID.status == 400)
        #expect(noID.json["error"] == "open needs \"id\" (an integer)")
        let wordID = try notes.act(#"{"action": "open", "id": "first"}"#)
        #expect(wordID.status == 400)
        #expect(wordID.json["error"] == "\"id\" of open must be an integer, not \"first\"")
        #expect(try notes.state()["stack"] == ["notes"])
        let missing = try notes.act(#"{"action": "open", "id": "42"}"#)
        #expect(missing.status == 404)
        #expect(missing.json["error"] == "There is no note 42.")
    }
}
