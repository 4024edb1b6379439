import AppShell
import AppShellTesting
import Testing

/// The pages and their HTML forms, as a browser without JavaScript uses them: every action is a
/// form posted to `/actions` and answered with a 303 to the page to show.
@Suite struct FormFlowTests {
    @Test(arguments: TestMode.allCases)
    func everyScreenWorksWithFormsAlone(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        let root = try notes.get("/")
        #expect(root.status == 303)
        #expect(root.headers["Location"] == "/login")
        let login = try notes.get("/login")
        #expect(login.text.contains("<title>Log in — Notes</title>"))
        #expect(login.text.contains("/notes.css?v="))
        #expect(!login.text.contains("AppShell"))

        let loggedIn = try notes.submit("login", on: "/login", ["username": "demo", "password": "notes"])
        #expect(loggedIn.status == 303)
        #expect(loggedIn.headers["Location"] == "/notes")
        let list = try notes.get("/notes").text
        #expect(list.contains("data-screen=\"notes\""))
        #expect(list.contains("Welcome to Notes"))
        // The list is titled after the app: its page's title is the app's name, once.
        #expect(list.contains("<title>Notes</title>"))

        // The sheet: a refused save leads back to it, which says why and keeps what was typed.
        #expect(try notes.submit("compose", on: "/notes").headers["Location"] == "/notes/new")
        let refused = try notes.submit("save", on: "/notes/new", ["title": "", "body": "a draft"])
        #expect(refused.status == 303)
        #expect(refused.headers["Location"] == "/notes/new")
        let sheet = try notes.get("/notes/new").text
        #expect(sheet.contains("role=\"alert\">A note needs a title.</p>"))
        #expect(sheet.contains(">a draft</textarea>"))
        #expect(sheet.contains("data-role=\"close\""))

        let saved = try notes.submit("save", on: "/notes/new", ["title": "Tea & biscuits", "body": "<b>not bold</b>"])
        #expect(saved.headers["Location"] == "/notes")
        #expect(try notes.get("/notes").text.contains("Tea &amp; biscuits"))

        // A note is pushed by its form (with its id), and its page is its URL.
        let opened = try notes.submit("open", on: "/notes", ["id": "2"])
        #expect(opened.headers["Location"] == "/notes/2")
        let page = try notes.get("/notes/2").text
        #expect(page.contains("<title>Tea &amp; biscuits — Notes</title>"))
        #expect(page.contains("&lt;b&gt;not bold&lt;/b&gt;"))
        #expect(page.contains("data-role=\"back\""))
        #expect(try notes.submit("back", on: "/notes/2").headers["Location"] == "/notes")

        #expect(try notes.submit("logout", on: "/notes").headers["Location"] == "/login")
    }

    @Test(arguments: TestMode.allCases)
    func aFormWithoutItsTokenChangesNothing(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        let forged = try notes.postForm("/actions", "action=compose")
        #expect(forged.status == 403)
        #expect(try notes.state()["presented"] == .null)
    }

    @Test(arguments: TestMode.allCases)
    func theAppsOwnFilesAreServed(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        #expect(try notes.get("/notes.css").status == 200)
        // The framework's page script, though Public/ has no copy, at the URL every page links.
        let script = try notes.get("/app.js?v=\(PageScript.version)")
        #expect(script.status == 200)
        #expect(script.body == PageScript.bytes)
        #expect(
            try notes.get("/login", headers: [("Accept", "text/html")]).text.contains(
                "/app.js?v=\(PageScript.version)"))
        #expect(try notes.get("/favicon.ico").status == 200)
        #expect(try notes.get("/healthz").json == ["status": "ok"])
    }
}
