import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// What a user gets at the edges of navigation, over HTTP: deep links and launches together.
@Suite struct NavigationEdgeTests {
    /// A client logged in as `demo`.
    static func loggedIn(_ live: LiveServer) throws -> TestClient {
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        return client
    }

    @Test func aLaunchUnderTheModalScreenShowsTheListWhenADeepLinkReturnsToMain() throws {
        let (_, live) = try PageTests.start()
        let client = try Self.loggedIn(live)
        #expect(try PageTests.html(client, "/main/second").status == 200)
        // Launched from a notification while second is up: main consumes it when it next appears.
        let launched = try ShellAPITests.act(client, "launch", #", "source": "notification""#).json
        #expect(launched["defaults"]?["viewType"] == 1)
        #expect(launched["presented"] == "second")
        let page = try PageTests.html(client, "/main")
        #expect(page.status == 200)
        let state = try client.get("/api/state").json
        // Main appeared and pushed the list, once; the link does not take it away again.
        #expect(state["stack"] == ["main", "list"])
        #expect(state["presented"] == .null)
        #expect(state["defaults"]?["viewType"] == 0)
        #expect(page.text.contains("data-screen=\"list\""))
        let pops = state["lifecycle"]?.arrayValue?.filter { $0 == ["event": "completion", "transition": "pop"] }
        #expect(pops?.isEmpty == true)
    }

    @Test func aLaunchUnderTheModalScreenShowsOneListWhenADeepLinkAsksForTheList() throws {
        let (_, live) = try PageTests.start()
        let client = try Self.loggedIn(live)
        _ = try PageTests.html(client, "/main/second")
        _ = try ShellAPITests.act(client, "launch", #", "source": "notification""#)
        _ = try PageTests.html(client, "/main/list")
        let state = try client.get("/api/state").json
        #expect(state["stack"] == ["main", "list"])
        #expect(state["defaults"]?["viewType"] == 0)
    }
}

/// Logging in without JavaScript, through the forms.
@Suite struct LoginFormTests {
    @Test func aFailedLoginKeepsWhereTheUserWasGoing() throws {
        let (_, live) = try PageTests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let login = try PageTests.html(client, "/login?next=%2Fmain%2Flist")
        let token = try PageTests.token(login.text)
        let wrong = try client.postForm(
            "/actions", "csrf=\(token)&action=login&username=demo&password=nope&next=%2Fmain%2Flist")
        #expect(wrong.status == 303)
        #expect(wrong.headers["Location"] == "/login?next=%2Fmain%2Flist")
        let again = try PageTests.html(client, try #require(wrong.headers["Location"])).text
        #expect(again.contains("role=\"alert\">Wrong username or password.</p>"))
        #expect(again.contains("name=\"next\" value=\"/main/list\""))
        // The address the page reports keeps it too (the script writes it into the history).
        #expect(again.contains("data-url=\"/login?next=%2Fmain%2Flist\""))
        let right = try client.postForm(
            "/actions", "csrf=\(token)&action=login&username=demo&password=appshell&next=%2Fmain%2Flist")
        #expect(right.headers["Location"] == "/main/list")
    }
}

extension LoginFormTests {
    /// The login page's alert, if any.
    static func alert(_ page: String) -> String? {
        guard let start = page.range(of: "role=\"alert\">")?.upperBound else { return nil }
        return String(page[start...].prefix { $0 != "<" })
    }

    @Test func aRateLimitedFormSaysWhatTheJSONSays() throws {
        let (_, live) = try PageTests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let token = try PageTests.token(try PageTests.html(client, "/login").text)
        for _ in 1...5 {
            _ = try client.postForm("/actions", "csrf=\(token)&action=login&username=demo&password=nope")
        }
        let limited = try client.postForm("/actions", "csrf=\(token)&action=login&username=demo&password=appshell")
        #expect(limited.status == 303)
        let page = try PageTests.html(client, try #require(limited.headers["Location"])).text
        let json = try ShellAPITests.login(client)
        #expect(json.status == 429)
        #expect(Self.alert(page) == json.json["error"]?.stringValue)
        #expect(json.json["view"]?["message"] == json.json["error"])
    }

    @Test func aBusyServerFormSaysWhatTheJSONSays() throws {
        let (app, live) = try AllowedHostsTests.start { $0.maxConcurrentPasswordChecks = 1 }
        let client = live.client()
        _ = try client.get("/api/state")
        let token = try PageTests.token(try PageTests.html(client, "/login").text)
        #expect(app.environment.passwordChecks.acquire())
        defer { app.environment.passwordChecks.release() }
        let busy = try client.postForm("/actions", "csrf=\(token)&action=login&username=demo&password=appshell")
        let page = try PageTests.html(client, try #require(busy.headers["Location"])).text
        let json = try ShellAPITests.login(client)
        #expect(json.status == 503)
        #expect(Self.alert(page) == json.json["error"]?.stringValue)
        #expect(json.json["view"]?["message"] == json.json["error"])
    }
}
