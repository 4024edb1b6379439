import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The pages, forms without JavaScript, CSRF and Origin checks, and the event stream.
@Suite struct PageTests {
    static func start(splashDelay: Int = 0, reminderDelay: Int = 5000) throws -> (DemoServer, LiveServer) {
        let app = try makeApp(splashDelay: splashDelay, reminderDelay: reminderDelay)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    /// The demo served in `mode` (the tests that take one run over a socket and in process).
    static func start(_ mode: TestMode) throws -> (DemoServer, TestServer) {
        let app = try makeApp(splashDelay: 0, reminderDelay: 5000)
        return (app, try TestServer(mode, responder: try app.makeResponder()))
    }

    static func makeApp(splashDelay: Int, reminderDelay: Int) throws -> DemoServer {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = splashDelay
        configuration.reminderDelayMilliseconds = reminderDelay
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        return try DemoServer(configuration: configuration)
    }

    /// The value of the first hidden `csrf` field of a page.
    static func token(_ page: String) throws -> String {
        let marker = "name=\"csrf\" value=\""
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    static func html(_ client: any HTTPTestClient, _ path: String) throws -> TestResponse {
        try client.get(path, headers: [("Accept", "text/html")])
    }

    @Test func everyScreenHasItsURLAndSecurityHeaders() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        let root = try Self.html(client, "/")
        #expect(root.status == 303)
        #expect(root.headers["Location"] == "/login")
        let login = try Self.html(client, "/login")
        #expect(login.status == 200)
        #expect(login.text.contains("data-screen=\"login\""))
        #expect(login.text.contains("<h1 id=\"login-title\" tabindex=\"-1\">Log in</h1>"))
        #expect(login.text.contains("<title>Log in — AppShell</title>"))
        let policy = try #require(login.headers["Content-Security-Policy"])
        #expect(policy.contains("script-src 'self';"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(login.headers["X-Content-Type-Options"] == "nosniff")
        #expect(login.headers["Referrer-Policy"] == "same-origin")
        #expect(!login.text.contains("<script>"))
        #expect(!login.text.contains("style="))
        #expect(try Self.html(client, "/nowhere").status == 404)
    }

    @Test func theSplashRefreshesItselfWithoutJavaScript() throws {
        let (_, live) = try Self.start(splashDelay: 60_000)
        let page = try Self.html(live.client(), "/main/list")
        #expect(page.status == 200)
        #expect(page.text.contains("data-screen=\"splash\""))
        #expect(page.text.contains("<noscript><meta http-equiv=\"refresh\" content=\"1\"></noscript>"))
        #expect(page.text.contains("/splash.svg?v="))
    }

    @Test func assetsHaveVersionedURLsCachedForAYear() throws {
        let (_, live) = try Self.start()
        let page = try Self.html(live.client(), "/login").text
        let start = try #require(page.range(of: "href=\"/app.css?v=")).lowerBound
        let url = String(page[page.index(start, offsetBy: 6)...].prefix { $0 != "\"" })
        let css = try live.client().get(url)
        #expect(css.status == 200)
        #expect(css.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(css.headers["ETag"] != nil)
    }

    @Test(arguments: TestMode.allCases) func formsWorkWithoutJavaScript(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        let token = try #require(try client.forms(on: "/login").first?.value(of: "csrf"))
        let wrong = try client.submit("login", on: "/login", ["username": "demo", "password": "nope"])
        #expect(wrong.status == 303)
        #expect(wrong.headers["Location"] == "/login")
        let again = try Self.html(client, "/login").text
        #expect(again.contains("role=\"alert\">Wrong username or password.</p>"))
        let right = try client.submit("login", on: "/login", ["username": "demo", "password": "appshell"])
        #expect(right.status == 303)
        #expect(right.headers["Location"] == "/main")
        // The id rotated, and with it the token: the old one no longer works.
        let refused = try client.postForm("/actions", "csrf=\(token)&action=showList")
        #expect(refused.status == 403)
        let pushed = try client.submit("showList", on: "/main")
        #expect(pushed.headers["Location"] == "/main/list")
        let back = try client.submit("pop", on: "/main/list")
        #expect(back.headers["Location"] == "/main")
    }

    @Test(arguments: TestMode.allCases) func aMissingOrWrongTokenIs403AndChangesNothing(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        let version = try client.get("/api/state").json["version"]
        for body in [
            "action=login&username=demo&password=appshell", "csrf=0000&action=login&username=demo&password=appshell",
        ] {
            let response = try client.postForm("/actions", body)
            #expect(response.status == 403)
        }
        let state = try client.get("/api/state").json
        #expect(state["version"] == version)
        #expect(state["screen"] == "login")
    }

    @Test func refusedRequestsKeepWhatTheScreenShows() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let failed = try client.postJSON("/api/actions", #"{"action": "login", "username": "demo", "password": "x"}"#)
        #expect(failed.json["view"]?["message"] == "Wrong username or password.")
        #expect(try client.postForm("/actions", "csrf=nope&action=login").status == 403)
        #expect(try client.postJSON("/api/actions", "{").status == 400)
        #expect(try client.postForm("/api/actions", "action=login").status == 415)
        let state = try client.get("/api/state").json
        #expect(state["view"]?["message"] == "Wrong username or password.")
        #expect(state["lifecycle"] == failed.json["lifecycle"])
    }

    @Test func aForeignOriginIs403() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let foreign = try client.postJSON(
            "/api/actions", #"{"action": "launch", "source": "notification"}"#,
            headers: [("Origin", "https://evil.example")])
        #expect(foreign.status == 403)
        #expect(try client.get("/api/state").json["defaults"] == [:])
        let same = try client.postJSON(
            "/api/actions", #"{"action": "launch", "source": "notification"}"#,
            headers: [("Origin", "http://127.0.0.1:\(live.port)")])
        #expect(same.status == 200)
    }

    @Test func loggedOutUsersAreSentToLoginAndComeBack() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let asked = try Self.html(client, "/main/list")
        #expect(asked.status == 303)
        #expect(asked.headers["Location"] == "/login?next=%2Fmain%2Flist")
        let login = try Self.html(client, "/login?next=%2Fmain%2Flist").text
        #expect(login.contains("name=\"next\" value=\"/main/list\""))
        let done = try client.submit(
            "login", on: "/login?next=%2Fmain%2Flist", ["username": "demo", "password": "appshell"])
        #expect(done.headers["Location"] == "/main/list")
        // Only same-site paths are honoured.
        #expect(try Self.html(client, "/login?next=https://evil.example").status == 303)
    }

    @Test func openingAURLRestoresThatStack() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try client.postJSON("/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(try Self.html(client, "/main/second").text.contains("data-screen=\"second\""))
        var state = try client.get("/api/state").json
        #expect(state["presented"] == "second")
        #expect(state["coordinators"]?["children"]?.arrayValue?.first?["children"]?.arrayValue?.count == 1)
        #expect(try Self.html(client, "/main/list").text.contains("data-stack=\"main list\""))
        state = try client.get("/api/state").json
        #expect(state["presented"] == .null)
        #expect(state["stack"] == ["main", "list"])
        #expect(state["coordinators"] == ["name": "app", "children": [["name": "main", "children": []]]])
        #expect(try Self.html(client, "/login").headers["Location"] == "/main/list")
        // The launch link changes nothing on GET: it leads to the current page, which sends it.
        #expect(try Self.html(client, "/?launch=notification").headers["Location"] == "/main/list?launch=notification")
    }

    @Test func theEventStreamSendsTheStateAndEveryChange() throws {
        let (app, live) = try Self.start(reminderDelay: 200)
        app.shell.startScheduler()
        defer { app.shell.stopScheduler() }
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try client.postJSON("/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        let cookie = client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let version = try #require(try client.get("/api/state").json["version"]?.integerValue)
        let events = try RawConnection(port: live.port)
        try events.send("GET /api/events HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n\r\n")
        let first = try events.read(through: "\r\n\r\n")
        #expect(first.contains("text/event-stream"))
        let initial = try events.read(through: "}\n\n")
        // `id: <epoch>.<version>`: the version, and the session's line of versions.
        let id = try #require(LiveEventsTests.eventID(initial))
        #expect(initial.contains("event: state\nid: \(id)\n"))
        #expect(id.hasSuffix(".\(version)") && id.count > ".\(version)".count)
        #expect(initial.contains("\"html\":"))
        _ = try client.postJSON("/api/actions", #"{"action": "showList"}"#)
        let change = try events.read(through: "}\n\n")
        #expect(change.contains("id: \(id.dropLast(String(version).count))\(version + 1)\n"))
        #expect(change.contains("\"url\":\"/main/list\""))
        _ = try client.postJSON("/api/actions", #"{"action": "pop"}"#)
        _ = try events.read(through: "}\n\n")
        _ = try client.postJSON("/api/actions", #"{"action": "remind"}"#)
        let reminder = try events.read(through: "}\n\n")
        #expect(reminder.contains("event: notification\n"))
        #expect(reminder.contains("\"title\":\"AppShell\""))
        // What a click launches: the launch action's parameters, typed by the app (`DemoLaunch`).
        #expect(reminder.contains("\"launch\":{\"source\":\"notification\"}"))
    }

    @Test func aClientThatIsUpToDateGetsOnlyNewEvents() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        let version = try #require(try client.get("/api/state").json["version"]?.integerValue)
        let cookie = client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let (first, _) = try LiveEventsTests.openStream(live.port, cookie: cookie)
        let id = try #require(LiveEventsTests.eventID(try first.read(through: "}\n\n")))
        let epoch = id.dropLast(String(version).count)
        let (events, _) = try LiveEventsTests.openStream(live.port, cookie: cookie, lastEventID: id)
        _ = try client.postJSON("/api/actions", #"{"action": "launch", "source": "notification"}"#)
        let next = try events.read(through: "}\n\n")
        #expect(next.contains("id: \(epoch)\(version + 1)\n"))
    }

    @Test func payloadsForThePageCarryTheFragment() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let answer = try client.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#,
            headers: [("X-AppShell-Fragment", "1")]
        ).json
        #expect(answer["url"] == "/main")
        #expect(answer["title"] == "Main — AppShell")
        #expect(answer["html"]?.stringValue?.contains("data-action=\"showList\"") == true)
        let plain = try client.postJSON("/api/actions", #"{"action": "showList"}"#).json
        #expect(plain["html"] == nil)
    }
    /// The script knows no app's action or screen names: the markup says which form goes back,
    /// closes or gives the session a new id (`data-role`), and whether the app still starts.
    @Test func theMarkupTellsTheScriptWhatActionsMeanAndWhetherTheAppStarts() throws {
        let (_, starting) = try Self.start(splashDelay: 60_000)
        #expect(try Self.html(starting.client(), "/main").text.contains("data-starting=\"true\""))
        let (_, live) = try Self.start()
        let client = live.client()
        let login = try Self.html(client, "/login").text
        #expect(login.contains("data-starting=\"\""))
        #expect(login.contains("data-launch-action=\"launch\""))
        #expect(login.contains("data-action=\"login\" data-role=\"rotates-session\">"))
        let answer = try client.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#,
            headers: [("X-AppShell-Fragment", "1")]
        ).json
        #expect(answer["starting"] == false)
        #expect(answer["html"]?.stringValue?.contains("data-action=\"logout\" data-role=\"rotates-session\">") == true)
        #expect(answer["html"]?.stringValue?.contains("data-action=\"showList\">") == true)
        // The page's script asks for permission to notify on the form the server marks, and
        // knows no action of the demo's by name.
        #expect(answer["html"]?.stringValue?.contains("data-action=\"remind\" data-role=\"notifies\">") == true)
        #expect(!String(decoding: PageScript.bytes, as: UTF8.self).contains("\"remind\""))
        #expect(try Self.html(client, "/main/list").text.contains("data-action=\"pop\" data-role=\"back\">"))
        #expect(try Self.html(client, "/main/second").text.contains("data-action=\"dismiss\" data-role=\"close\">"))
    }
}
