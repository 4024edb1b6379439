import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Synchronization
import Testing

/// The JSON API of the demo, against a live server: splash routing, login, logout, navigation,
/// modal presentation, notification launch and the error cases.
@Suite struct ShellAPITests {
    /// The shipped config.json (user `demo`, password `appshell`) with the memory store.
    static func start(splashDelay: Int = 0, maxSessionsInMemory: Int? = nil) throws -> (DemoServer, LiveServer) {
        let app = try makeApp(splashDelay: splashDelay, maxSessionsInMemory: maxSessionsInMemory)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    /// The demo served in `mode`: the tests that take a `TestMode` run over a socket and in process.
    static func start(_ mode: TestMode) throws -> (DemoServer, TestServer) {
        let app = try makeApp(splashDelay: 0, maxSessionsInMemory: nil)
        return (app, try TestServer(mode, responder: try app.makeResponder()))
    }

    static func makeApp(
        splashDelay: Int, maxSessionsInMemory: Int?, _ edit: (inout DemoConfiguration) -> Void = { _ in }
    ) throws -> DemoServer {
        try DemoServer(
            configuration: configuration(splashDelay: splashDelay) {
                if let maxSessionsInMemory { $0.sessions.maxSessionsInMemory = maxSessionsInMemory }
                edit(&$0)
            })
    }

    /// The repository's config.json on the memory store, with `splashDelay`, then `edit`.
    static func configuration(
        splashDelay: Int = 0, _ edit: (inout DemoConfiguration) -> Void = { _ in }
    ) throws -> DemoConfiguration {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = splashDelay
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        edit(&configuration)
        return configuration
    }

    static func act(_ client: any HTTPTestClient, _ action: String, _ extra: String = "") throws -> TestResponse {
        try client.postJSON("/api/actions", "{\"action\": \"\(action)\"\(extra)}")
    }

    static func login(_ client: any HTTPTestClient) throws -> TestResponse {
        try act(client, "login", #", "username": "demo", "password": "appshell""#)
    }

    static func screens(_ state: JSON) -> [String?] {
        [state["screen"]?.stringValue, state["root"]?.stringValue, state["presented"]?.stringValue]
    }

    @Test func splashTurnsIntoLoginByItself() throws {
        let (_, live) = try Self.start(splashDelay: 300)
        let client = live.client()
        let first = try client.get("/api/state").json
        #expect(first["screen"] == "splash")
        #expect(first["version"] == 0)
        Thread.sleep(forTimeInterval: 0.4)
        let later = try client.get("/api/state").json
        #expect(later["screen"] == "login")
        #expect(later["root"] == "login")
        #expect(later["stack"] == [])
        #expect(later["coordinators"] == ["name": "app", "children": [["name": "login", "children": []]]])
        #expect(later["transition"] == ["kind": "root", "animated": true])
        let tail = later["lifecycle"]?.arrayValue?.suffix(10).map { $0 } ?? []
        #expect(
            tail == [
                ["screen": "splash", "event": "willMove"], ["screen": "login", "event": "willMove"],
                ["screen": "login", "event": "viewDidLoad"], ["screen": "splash", "event": "viewWillDisappear"],
                ["screen": "login", "event": "viewWillAppear"], ["screen": "splash", "event": "viewDidDisappear"],
                ["screen": "login", "event": "viewDidAppear"], ["screen": "splash", "event": "removeFromParent"],
                ["screen": "login", "event": "didMove"], ["event": "completion", "transition": "root"],
            ])
    }

    @Test func theServerFinishesTheSplashWithNoFurtherRequest() throws {
        let (app, live) = try Self.start(splashDelay: 300)
        app.shell.startScheduler()
        defer { app.shell.stopScheduler() }
        // The browser comes back (as its event stream will) while the splash still runs: the
        // splash is then on the timer. (On a busy machine the second request can come after the
        // 300 ms, and finishes the splash itself: a setup that did not happen, tried again.)
        var setUp: TestClient?
        for _ in 0..<5 where setUp == nil {
            let client = live.client()
            #expect(try client.get("/api/state").json["screen"] == "splash")
            if try client.get("/api/state").json["screen"] == "splash" { setUp = client }
        }
        let client = try #require(setUp, "no second request came during the splash")
        // (The timer's entry is not counted here: on a busy machine it can already have run.)
        let cookie = try #require(client.cookies["appshell_session"])
        let id = try #require(SessionID(cookie))
        var screen: String?
        // Within 60 s (a bound only: the timer is due after 300 ms).
        let deadline = Date(timeIntervalSinceNow: 60)
        while screen != "login" && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            // Looked at from inside the server, without a request that could advance it.
            screen = try app.sessions.withLiveSession(id) { ($0.attachment as? LiveApp)?.root.child.name } ?? nil
        }
        #expect(screen == "login")
        #expect(app.shell.scheduler.pendingCount == 0)
        let state = try client.get("/api/state").json
        #expect(state["screen"] == "login")
        #expect(state["version"] == 1)
    }

    @Test func splashTurnsIntoMainWhenLoggedIn() throws {
        let (app, live) = try Self.start(splashDelay: 200)
        // A session whose defaults say it is logged in, but that has no controllers yet.
        let cookie = try app.sessions.withSession(presentedID: nil) {
            $0.defaults.set(true, forKey: "isLogin")
            $0.defaults.set("demo", forKey: "username")
        }.context.id.text
        let client = live.client()
        client.cookies[app.cookie.name] = cookie
        #expect(try client.get("/api/state").json["screen"] == "splash")
        Thread.sleep(forTimeInterval: 0.3)
        let state = try client.get("/api/state").json
        #expect(Self.screens(state) == ["main", "main", nil])
        #expect(state["stack"] == ["main"])
    }

    @Test(arguments: TestMode.allCases) func wrongThenRightPassword(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        _ = try client.get("/api/state")
        let cookie = try #require(client.cookies["appshell_session"])
        let wrong = try Self.act(client, "login", #", "username": "demo", "password": "wrong""#)
        #expect(wrong.status == 401)
        #expect(wrong.json["error"] == "Wrong username or password.")
        #expect(wrong.json["screen"] == "login")
        #expect(wrong.json["view"]?["message"] == "Wrong username or password.")
        #expect(wrong.json["defaults"] == [:])
        #expect(wrong.headers["Set-Cookie"] == nil)
        let unknownUser = try Self.act(client, "login", #", "username": "nobody", "password": "appshell""#)
        #expect(unknownUser.status == 401)

        let right = try Self.login(client)
        #expect(right.status == 200)
        #expect(Self.screens(right.json) == ["main", "main", nil])
        #expect(right.json["defaults"] == ["isLogin": true, "username": "demo"])
        #expect(right.json["transition"] == ["kind": "root", "animated": true])
        #expect(right.json["coordinators"] == ["name": "app", "children": [["name": "main", "children": []]]])
        // The id was rotated: the old cookie now names nothing (and, moments after, gets no
        // new session and no cookie either).
        #expect(right.headers["Set-Cookie"] != nil)
        #expect(client.cookies["appshell_session"] != cookie)
        let old = live.client()
        old.cookies["appshell_session"] = cookie
        let fresh = try old.get("/api/state")
        #expect(fresh.json["defaults"] == [:])
        #expect(fresh.json["screen"] == "splash")
        #expect(fresh.headers["Set-Cookie"] == nil)
    }

    @Test(arguments: TestMode.allCases) func moreThanFiveFailuresAMinuteAre429(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        _ = try client.get("/api/state")
        for _ in 0..<5 {
            #expect(try Self.act(client, "login", #", "username": "demo", "password": "x""#).status == 401)
        }
        let limited = try Self.login(client)
        #expect(limited.status == 429)
        #expect(limited.json["screen"] == "login")
        #expect(limited.json["defaults"] == [:])
        // The limit is per client IP too: a fresh session from the same address is refused.
        let other = live.client()
        _ = try other.get("/api/state")
        #expect(try Self.login(other).status == 429)
    }

    @Test(arguments: TestMode.allCases) func logoutRotatesAndGoesBackToLogin(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try Self.login(client)
        let cookie = client.cookies["appshell_session"]
        let out = try Self.act(client, "logout")
        #expect(out.status == 200)
        #expect(Self.screens(out.json) == ["login", "login", nil])
        #expect(out.json["defaults"] == ["isLogin": false])
        #expect(client.cookies["appshell_session"] != cookie)
    }

    @Test(arguments: TestMode.allCases) func pushPopPresentAndDismiss(mode: TestMode) throws {
        let (_, live) = try Self.start(mode)
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try Self.login(client)
        let list = try Self.act(client, "showList").json
        #expect(Self.screens(list) == ["list", "main", nil])
        #expect(list["stack"] == ["main", "list"])
        #expect(list["actions"] == ["pop", "launch"])
        let back = try Self.act(client, "pop").json
        #expect(back["stack"] == ["main"])
        #expect(back["transition"] == ["kind": "pop", "animated": true])
        let second = try Self.act(client, "presentSecond").json
        #expect(Self.screens(second) == ["second", "main", "second"])
        #expect(
            second["coordinators"]
                == ["name": "app", "children": [["name": "main", "children": [["name": "second", "children": []]]]]])
        let dismissed = try Self.act(client, "dismiss").json
        #expect(Self.screens(dismissed) == ["main", "main", nil])
        #expect(dismissed["coordinators"] == ["name": "app", "children": [["name": "main", "children": []]]])
        let events = dismissed["lifecycle"]?.arrayValue?.suffix(5).map { $0 } ?? []
        #expect(
            events == [
                ["screen": "second", "event": "viewWillDisappear"], ["screen": "main", "event": "viewWillAppear"],
                ["screen": "main", "event": "viewDidAppear"], ["screen": "second", "event": "viewDidDisappear"],
                ["event": "completion", "transition": "dismiss"],
            ])
    }

    @Test func aNotificationLaunchOnMainPushesTheListOnce() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try Self.login(client)
        let launched = try Self.act(client, "launch", #", "source": "notification""#).json
        #expect(launched["stack"] == ["main", "list"])
        #expect(launched["defaults"]?["viewType"] == 0)
        let popped = try Self.act(client, "pop").json
        #expect(popped["stack"] == ["main"])
        #expect(try client.get("/api/state").json["stack"] == ["main"])
    }

    @Test func aNotificationLaunchBeforeLoginOpensTheListAfterIt() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try Self.act(client, "launch", #", "source": "notification""#)
        let state = try client.get("/api/state").json
        #expect(state["screen"] == "login")
        #expect(state["defaults"] == ["viewType": 1])
        let after = try Self.login(client).json
        #expect(Self.screens(after) == ["list", "main", nil])
        #expect(after["stack"] == ["main", "list"])
        #expect(after["defaults"]?["viewType"] == 0)
        // Main pushed the list from its own appearance: the push ran after the root swap completed.
        let completions = after["lifecycle"]?.arrayValue?.filter { $0["event"] == "completion" }.suffix(2).map { $0 }
        #expect(
            completions == [
                ["event": "completion", "transition": "root"], ["event": "completion", "transition": "push"],
            ])
        _ = try Self.act(client, "pop")
        _ = try Self.act(client, "presentSecond")
        #expect(try Self.act(client, "dismiss").json["stack"] == ["main"])
    }

    @Test func anActionTheScreenDoesNotOfferIs409AndChangesNothing() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        let before = try client.get("/api/state").json
        let refused = try Self.act(client, "showList")
        #expect(refused.status == 409)
        #expect(refused.json["error"] == "the login screen does not offer \"showList\"")
        #expect(refused.json["screen"] == "login")
        #expect(refused.json["version"] == before["version"])
        #expect(try client.get("/api/state").json["version"] == before["version"])
    }

    @Test(arguments: [
        (#"{"action": "fly"}"#, 400, "unknown action"),
        (#"{"action": 3}"#, 400, "\"action\" string"),
        (#"{"username": "demo"}"#, 400, "\"action\" string"),
        (#"[1, 2]"#, 400, "\"action\" string"),
        (#"{"action": "login""#, 400, "not valid JSON"),
        (#"{"action": "login", "username": 1, "password": "x"}"#, 400, "\"username\" of login must be a string, not 1"),
        (#"{"action": "login", "username": "demo"}"#, 400, "login needs \"password\" (a string)"),
        (#"{"action": "launch", "source": "email"}"#, 400, "launch needs"),
    ])
    func malformedActionsAre400(body: String, status: Int, message: String) throws {
        let (_, live) = try Self.start()
        let client = live.client()
        let version = try client.get("/api/state").json["version"]
        let response = try client.postJSON("/api/actions", body)
        #expect(response.status == status)
        #expect(response.json["error"]?.stringValue?.contains(message) == true, "\(response.text)")
        #expect(try client.get("/api/state").json["version"] == version)
    }

    @Test func actionsMustBeJSON() throws {
        let (_, live) = try Self.start()
        let response = try live.client().postForm("/api/actions", "action=logout")
        #expect(response.status == 415)
    }

    @Test func thirtyTwoConcurrentActionsOnOneSessionAreSerialised() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try Self.login(client)
        let cookies = client.cookies
        let start = try #require(try client.get("/api/state").json["version"]?.integerValue)
        let versions = Mutex<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<32 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let own = TestClient(port: live.port)
                own.cookies = cookies
                let response = try? Self.act(own, "launch", #", "source": "notification""#)
                if let version = response?.json["version"]?.integerValue { versions.withLock { $0.append(version) } }
            }
        }
        group.wait()
        // One after another: the first launch pushes the list (one new version); the other 31
        // find the list showing and change nothing, so they answer the same version. Interleaved,
        // two would have pushed the list.
        let seen = versions.withLock { $0 }.sorted()
        #expect(seen == Array(repeating: start + 1, count: 32))
        let final = try client.get("/api/state").json
        #expect(final["version"]?.integerValue == start + 1)
        #expect(final["stack"] == ["main", "list"])
        #expect(final["defaults"]?["viewType"] == 0)
        let pushes = final["lifecycle"]?.arrayValue?.filter { $0 == ["event": "completion", "transition": "push"] }
        #expect(pushes?.count == 1)
    }
}
