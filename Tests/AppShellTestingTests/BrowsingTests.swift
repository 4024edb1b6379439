import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Testing

/// A small site over the HTTP layer alone, as an AppShell app answers: a login page whose form
/// carries a token, `/actions` that checks it and the `Origin`, redirects, a JSON login and a state.
enum Site {
    static let loginPage = """
        <!doctype html><title>Log in</title>
        <FORM method="post" action="/actions" data-action="login">
        <input type="hidden" name="csrf" value="t0k&amp;n">
        <input type="hidden" name="action" value="login">
        <label for="username">Username</label>
        <input id="username" name="username" autocomplete="username" required>
        <input id="password" name="password" type="password">
        <textarea name="note" rows=3>
        first line &lt;b&gt;</textarea>
        <input type="checkbox" name="remember" checked>
        <input type="checkbox" name="spam">
        <button type="submit">Log in</button>
        </FORM>
        <form method="post" action="/actions" data-action="open"><input type="hidden" name="action" value="open">
        <input type="hidden" name="csrf" value="t0k&amp;n"><input type="hidden" name="id" value="1"><button type="submit">One</button></form>
        <form method="post" action="/actions" data-action="open"><input type="hidden" name="action" value="open">
        <input type="hidden" name="csrf" value="t0k&amp;n"><input type="hidden" name="id" value="2"><button type="submit">Two</button></form>
        """

    static func router() -> Router {
        let reads = Locked(0)
        var router = Router()
        router.get("/login") { _ in .html(loginPage) }
        router.post("/actions") { request in
            let fields = try request.decodeForm()
            guard request.headers["Origin"].map({ $0.hasSuffix("//" + (request.headers["Host"] ?? "")) }) == true,
                fields["csrf"] == "t0k&n"
            else { return .text("refused", status: .forbidden) }
            if fields["action"] == "open" { return .redirect(to: "/notes/" + (fields["id"] ?? "")) }
            guard fields["username"] == "demo", fields["password"] == "p w", fields["note"] == "first line <b>",
                fields["remember"] == "on", fields["spam"] == nil
            else { return .redirect(to: "/login") }
            var response = Response.redirect(to: "/home")
            response.headers.add(name: "Set-Cookie", value: "user=demo; Path=/")
            return response
        }
        router.get("/home") { _ in .redirect(to: "/welcome", status: HTTPStatus(rawValue: 302)) }
        router.get("/welcome") { request in .text("welcome \(request.cookie(named: "user") ?? "nobody")") }
        router.get("/away") { _ in .redirect(to: "https://elsewhere.example/") }
        router.get("/loop") { _ in .redirect(to: "/loop") }
        router.post("/api/actions") { request in
            let body = try request.decodeJSON()
            let right = body["action"] == "login" && body["username"] == "demo" && body["password"] == "p w"
            return .json(["screen": right ? "home" : "login"], status: right ? .ok : .unauthorized)
        }
        router.get("/api/state") { _ in
            .json([
                "reads": .integer(
                    reads.withLock {
                        $0 += 1; return $0
                    })
            ])
        }
        return router
    }
}

/// The kit's browsing helpers (`HTTPTestClient+Browsing`, `HTMLForm`), live and in process.
@Suite struct BrowsingTests {
    @Test func aFormIsReadAsABrowserReadsIt() throws {
        let forms = HTMLForm.forms(in: Site.loginPage)
        #expect(forms.map(\.action) == ["login", "open", "open"])
        let login = try #require(forms.first)
        #expect(login.method == "post" && login.target == "/actions")
        #expect(login.fields.map(\.name) == ["csrf", "action", "username", "password", "note", "remember"])
        #expect(login.value(of: "csrf") == "t0k&n")
        #expect(login.value(of: "note") == "first line <b>")
        #expect(login.fields.first { $0.name == "password" }?.type == "password")
        #expect(
            try login.filled(with: ["username": "demo"]).map(\.1) == [
                "t0k&n", "login", "demo", "", "first line <b>", "on",
            ])
        #expect(throws: TestClientError.self) { try login.filled(with: ["nickname": "x"]) }
        #expect(throws: TestClientError.self) { try login.filled(with: ["csrf": "forged"]) }
        #expect(HTMLForm.encode([("a b", "c&d=é+")]) == "a+b=c%26d%3D%C3%A9%2B")
    }

    @Test(arguments: TestMode.allCases) func aSubmittedFormIsFollowedToItsPage(mode: TestMode) throws {
        let client = try TestServer(mode, responder: Site.router()).client()
        let posted = try client.submit("login", on: "/login", ["username": "demo", "password": "p w"])
        #expect(posted.status == 303)
        #expect(posted.headers["Location"] == "/home")
        let page = try client.follow(posted)
        #expect(page.status == 200)
        #expect(page.text == "welcome demo")
        // The button of note 2, among the two `open` forms.
        #expect(try client.submit("open", on: "/login", ["id": "2"]).headers["Location"] == "/notes/2")
        #expect(throws: TestClientError.self) { try client.submit("open", on: "/login", ["id": "3"]) }
        #expect(throws: TestClientError.self) { try client.submit("logout", on: "/login") }
        // A redirect elsewhere is left to the test; a loop throws.
        #expect(try client.follow(try client.get("/away")).headers["Location"] == "https://elsewhere.example/")
        #expect(throws: TestClientError.self) { try client.follow(try client.get("/loop")) }
    }

    @Test(arguments: TestMode.allCases) func logInGoesThroughTheFormOrTheJSONAction(mode: TestMode) throws {
        let server = try TestServer(mode, responder: Site.router())
        let form = server.client()
        #expect(try form.logIn(username: "demo", password: "p w", through: .form()).text == "welcome demo")
        #expect(form.cookies == ["user": "demo"])
        let json = server.client()
        #expect(try json.logIn(username: "demo", password: "p w").json == ["screen": "home"])
        #expect(try json.logIn(username: "demo", password: "wrong").status == 401)
    }

    @Test(arguments: TestMode.allCases) func waitingForAStateReadsUntilItHolds(mode: TestMode) throws {
        let client = try TestServer(mode, responder: Site.router()).client()
        let state = try client.waitForState { ($0["reads"]?.integerValue ?? 0) >= 3 }
        #expect(state["reads"] == 3)
        #expect(throws: TestClientError.self) { try client.waitForState(timeoutSeconds: 0.05) { _ in false } }
    }
}
