import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// A note's address, `/notes/<id>`, and the `launch` action that names a note: they open the note
/// when logged in, and wait for the splash and for login when they must.
@Suite struct DeepLinkTests {
    @Test(arguments: TestMode.allCases)
    func aNotesAddressOpensItLoggedInAndAfterLoginLoggedOut(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        let page = try notes.get("/notes/1")
        #expect(page.status == 200)
        #expect(page.text.contains("data-stack=\"notes note\""))
        #expect(try notes.get("/notes/99").status == 404)

        // Logged out, the address leads to login, which leads back to it.
        try notes.act(#"{"action": "back"}"#)
        #expect(try notes.act(#"{"action": "logout"}"#).json["screen"] == "login")
        let redirect = try notes.get("/notes/1")
        #expect(redirect.status == 303)
        #expect(redirect.headers["Location"] == "/login?next=%2Fnotes%2F1")
        let login = try notes.get("/login?next=%2Fnotes%2F1").text
        #expect(login.contains(#"<input type="hidden" name="next" value="/notes/1">"#))
        let loggedIn = try notes.submit(
            "login", on: "/login?next=%2Fnotes%2F1", ["username": "demo", "password": "notes"])
        #expect(loggedIn.headers["Location"] == "/notes/1")
        #expect(try notes.state()["view"]?["title"] == "Welcome to Notes")
    }

    @Test(arguments: TestMode.allCases)
    func anAddressOpenedDuringTheSplashIsShownAfterIt(mode: TestMode) throws {
        let notes = try NotesHarness(mode, splashMilliseconds: 400)
        // The splash shows at the address (and refreshes itself there without JavaScript)...
        let splash = try notes.get("/notes/1").text
        #expect(splash.contains("data-screen=\"splash\""))
        #expect(splash.contains("data-url=\"/notes/1\""))
        #expect(splash.contains("http-equiv=\"refresh\""))
        try notes.waitForState { $0["screen"] != "splash" }
        // ...then, logged out, it leads to login, and login to the note.
        let refreshed = try notes.get("/notes/1")
        #expect(refreshed.headers["Location"] == "/login?next=%2Fnotes%2F1")
        _ = try notes.get("/login?next=%2Fnotes%2F1")
        let note = try notes.act(#"{"action": "login", "username": "demo", "password": "notes"}"#).json
        #expect(note["screen"] == "note")
        #expect(note["stack"] == ["notes", "note"])
        #expect(note["view"]?["title"] == "Welcome to Notes")
    }

    @Test(arguments: TestMode.allCases)
    func aLaunchNamingANoteWaitsForTheSplashAndLogin(mode: TestMode) throws {
        let notes = try NotesHarness(mode, splashMilliseconds: 400)
        #expect(try notes.state()["screen"] == "splash")
        let launched = try notes.act(#"{"action": "launch", "source": "note", "id": "1"}"#)
        #expect(launched.status == 200)
        #expect(launched.json["screen"] == "splash")
        #expect(try notes.waitForState { $0["screen"] != "splash" }["screen"] == "login")
        let note = try notes.act(#"{"action": "login", "username": "demo", "password": "notes"}"#).json
        #expect(note["screen"] == "note")
        #expect(note["view"]?["id"] == 1)

        // Logged in, it opens the note at once; a note that is not there is 404, a launch without
        // a note 400.
        try notes.act(#"{"action": "back"}"#)
        #expect(
            try notes.act(#"{"action": "launch", "source": "note", "id": "1"}"#).json["stack"] == ["notes", "note"])
        #expect(try notes.act(#"{"action": "launch", "source": "note", "id": "7"}"#).status == 404)
        #expect(try notes.act(#"{"action": "launch", "source": "notification"}"#).status == 400)
        // The id is typed (`NotesLaunch.note(id: Int)`): JSON's integer or a form's text; a missing
        // or mistyped one is 400 naming it and its type.
        try notes.act(#"{"action": "back"}"#)
        #expect(try notes.act(#"{"action": "launch", "source": "note", "id": 1}"#).json["stack"] == ["notes", "note"])
        let noID = try notes.act(#"{"action": "launch", "source": "note"}"#)
        #expect(noID.status == 400)
        #expect(noID.json["error"] == "launch from note needs \"id\" (an integer)")
        let wordID = try notes.act(#"{"action": "launch", "source": "note", "id": "one"}"#)
        #expect(wordID.json["error"] == "launch from \"id\" of note must be an integer, not \"one\"")
    }

    /// A launch link carries its parameters: `/?launch=note&id=1` keeps `id` through the redirect
    /// to the current page, whose launch form sends it (and no other query member).
    @Test(arguments: TestMode.allCases)
    func aLaunchLinkCarriesItsParameters(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        _ = try notes.logIn()
        let link = try notes.client.get("/?launch=note&id=1&other=x")
        #expect(link.status == 303)
        #expect(link.headers["Location"] == "/notes?launch=note&id=1")
        let page = try notes.client.get("/notes?launch=note&id=1&other=x").text
        #expect(page.contains(#"<input type="hidden" name="source" value="note">"#))
        #expect(page.contains(#"<input type="hidden" name="id" value="1">"#))
        #expect(!page.contains(#"name="other""#))
        // The page's launch form, sent as a browser without JavaScript sends it.
        let launched = try notes.submit("launch", on: "/notes?launch=note&id=1")
        #expect(launched.status == 303)
        #expect(try notes.state()["stack"] == ["notes", "note"])
    }
}
