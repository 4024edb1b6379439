import AppShell
import AppShellTesting
import Testing

/// The pages and their HTML forms, as a browser without JavaScript uses them: every action is a
/// form posted to `/actions` and answered with a 303 to the page to show.
@Suite struct FormFlowTests {
    @Test(arguments: TestMode.allCases)
    func everyScreenWorksWithFormsAlone(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        let root = try notes.client.get("/")
        #expect(root.status == 303)
        #expect(root.headers["Location"] == "/login")
        let login = try notes.client.get("/login")
        #expect(login.text.contains("<title>Log in — Notes</title>"))
        #expect(login.text.contains("/notes.css?v="))
        #expect(!login.text.contains("AppShell"))

        let loggedIn = try notes.submit(
            [("action", "login"), ("username", "demo"), ("password", "notes")], from: "/login")
        #expect(loggedIn.status == 303)
        #expect(loggedIn.headers["Location"] == "/notes")
        let list = try notes.client.get("/notes").text
        #expect(list.contains("data-screen=\"notes\""))
        #expect(list.contains("Welcome to Notes"))

        // The sheet: a refused save leads back to it, which says why and keeps what was typed.
        #expect(try notes.submit([("action", "compose")], from: "/notes").headers["Location"] == "/notes/new")
        let refused = try notes.submit([("action", "save"), ("title", ""), ("body", "a draft")], from: "/notes/new")
        #expect(refused.status == 303)
        #expect(refused.headers["Location"] == "/notes/new")
        let sheet = try notes.client.get("/notes/new").text
        #expect(sheet.contains("role=\"alert\">A note needs a title.</p>"))
        #expect(sheet.contains(">a draft</textarea>"))
        #expect(sheet.contains("data-role=\"close\""))

        let saved = try notes.submit(
            [("action", "save"), ("title", "Tea & biscuits"), ("body", "<b>not bold</b>")], from: "/notes/new")
        #expect(saved.headers["Location"] == "/notes")
        #expect(try notes.client.get("/notes").text.contains("Tea &amp; biscuits"))

        // A note is pushed by its form (with its id), and its page is its URL.
        let opened = try notes.submit([("action", "open"), ("id", "2")], from: "/notes")
        #expect(opened.headers["Location"] == "/notes/2")
        let page = try notes.client.get("/notes/2").text
        #expect(page.contains("<title>Tea &amp; biscuits — Notes</title>"))
        #expect(page.contains("&lt;b&gt;not bold&lt;/b&gt;"))
        #expect(page.contains("data-role=\"back\""))
        #expect(try notes.submit([("action", "back")], from: "/notes/2").headers["Location"] == "/notes")

        #expect(try notes.submit([("action", "logout")], from: "/notes").headers["Location"] == "/login")
    }

    @Test(arguments: TestMode.allCases)
    func aFormWithoutItsTokenChangesNothing(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        let forged = try notes.client.postForm("/actions", "action=compose")
        #expect(forged.status == 403)
        #expect(try notes.state()["presented"] == .null)
    }

    @Test(arguments: TestMode.allCases)
    func theAppsOwnFilesAreServed(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        #expect(try notes.client.get("/notes.css").status == 200)
        // The framework's page script, though Public/ has no copy, at the URL every page links.
        let script = try notes.client.get("/app.js?v=\(PageScript.version)")
        #expect(script.status == 200)
        #expect(script.body == PageScript.bytes)
        #expect(
            try notes.client.get("/login", headers: [("Accept", "text/html")]).text.contains(
                "/app.js?v=\(PageScript.version)"))
        #expect(try notes.client.get("/favicon.ico").status == 200)
        #expect(try notes.client.get("/healthz").json == ["status": "ok"])
    }
}
