import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// Each claim of the JSON API article (`Documentation.docc/JSONAPI.md`) that a test can check: the
/// state's keys, what `version` means, and the shape and status of every error answer.
@Suite struct JSONAPIContractTests {
    /// The keys the article's table lists, and no others (`theArticleListsTheStatesKeys`).
    static let stateKeys: Set<String> = [
        "screen", "root", "stack", "presented", "coordinators", "defaults", "lifecycle", "version", "actions",
        "transition", "view",
    ]

    static func keys(_ json: JSON) -> Set<String> { Set(json.objectValue?.keys.map { $0 } ?? []) }

    /// The state an answer carries, without its `error`.
    static func state(_ json: JSON) -> JSON {
        var members = json.objectValue ?? [:]
        members["error"] = nil
        return .object(members)
    }

    /// The article's table of the state ("Read the state") names these keys, each once.
    @Test func theArticleListsTheStatesKeys() throws {
        let article = try DocumentationTests.read("\(DocumentationTests.catalog)/JSONAPI.md")
        let section = try #require(article.components(separatedBy: "### Read the state").dropFirst().first)
            .components(separatedBy: "\n### ")[0]
        let listed = section.components(separatedBy: "\n").filter { $0.hasPrefix("| `") }.compactMap {
            $0.split(separator: "`").dropFirst().first.map(String.init)
        }
        #expect(listed.count == Set(listed).count)
        #expect(Set(listed) == Self.stateKeys)
    }

    @Test func theStateHasTheDocumentedKeysAndANewSessionStartsAtVersionZero() throws {
        let (_, live) = try ShellAPITests.start(splashDelay: 60_000)
        let first = try live.client().get("/api/state").json
        #expect(Self.keys(first) == Self.stateKeys)
        #expect(first["version"] == 0)
        #expect(first["screen"] == "splash")
        #expect(first["actions"] == ["launch"])
    }

    /// `version`: every change of the state gives a new version, and only a change does — so two
    /// answers with the same version are the same state. Checked over a walk through every screen,
    /// with refused, failed and repeated actions among the accepted ones.
    @Test func aVersionNamesExactlyOneState() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        var seen: [Int: JSON] = [:]
        var last: JSON?
        func record(_ json: JSON, _ step: String) {
            let state = Self.state(json)
            guard let version = state["version"]?.integerValue else {
                Issue.record("\(step): no version in \(json)")
                return
            }
            if let earlier = seen[version] {
                #expect(earlier == state, "\(step): version \(version) names two states")
            }
            // And the other way round: nothing changed, so no new version.
            if let last, Self.withoutVersion(last) == Self.withoutVersion(state) {
                #expect(last["version"] == state["version"], "\(step): a new version for the same state")
            }
            seen[version] = state
            last = state
        }
        func act(_ action: String, _ extra: String = "", _ step: String) throws {
            let answer = try ShellAPITests.act(client, action, extra)
            if answer.status != 400 { record(answer.json, "\(step) (answer \(answer.status))") }
            record(try client.get("/api/state").json, "\(step) (state after)")
        }
        record(try client.get("/api/state").json, "start")
        let wrong = #", "username": "demo", "password": "wrong""#
        try act("login", wrong, "a failed login")
        try act("login", wrong, "the same failure again")
        try act("login", #", "username": "demo""#, "a login without a password")
        try act("launch", #", "source": "notification""#, "launch on login")
        try act("showList", "", "an action login does not offer")
        try act("login", #", "username": "demo", "password": "appshell""#, "login")
        try act("showList", "", "showList")
        try act("launch", #", "source": "notification""#, "launch on the list")
        try act("launch", #", "source": "notification""#, "launch on the list again")
        try act("pop", "", "pop")
        try act("presentSecond", "", "presentSecond")
        try act("launch", #", "source": "notification""#, "launch over second")
        try act("dismiss", "", "dismiss")
        try act("logout", "", "logout")
        #expect(seen.count >= 8)
    }

    static func withoutVersion(_ state: JSON) -> JSON {
        var members = state.objectValue ?? [:]
        members["version"] = nil
        return .object(members)
    }

    @Test func theLifecycleHoldsTheLast50Events() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try ShellAPITests.login(client)
        for _ in 0..<10 {
            _ = try ShellAPITests.act(client, "showList")
            _ = try ShellAPITests.act(client, "pop")
        }
        let lifecycle = try #require(try client.get("/api/state").json["lifecycle"]?.arrayValue)
        #expect(lifecycle.count == 50)
        #expect(lifecycle.last == ["event": "completion", "transition": "pop"])
    }

    @Test func badJSONIs400WithLineAndColumn() throws {
        let (_, live) = try ShellAPITests.start()
        let response = try live.client().postJSON("/api/actions", "{\n  \"action\": }")
        #expect(response.status == 400)
        #expect(Self.keys(response.json) == ["error"])
        let message = response.json["error"]?.stringValue ?? ""
        #expect(message.contains("line 2") && message.contains("column"), "\(message)")
    }

    @Test func noFreePasswordCheckIs503WithRetryAfterAndTheState() throws {
        let (app, live) = try AllowedHostsTests.start {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 1
        }
        let client = try LoginLimitTests.visitor(live)
        // The queue's only place is taken.
        let place = try #require(app.server.accounts.passwordChecks.reserve())
        defer { place.cancel() }
        let busy = try LoginLimitTests.right(client)
        #expect(busy.status == 503)
        #expect(busy.headers["Retry-After"] == "1")
        #expect(Self.keys(busy.json) == Self.stateKeys.union(["error"]))
    }

    @Test func aFailedLoginThatChangesTheMessageGivesANewVersion() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        let before = try #require(try client.get("/api/state").json["version"]?.integerValue)
        let wrong = try ShellAPITests.act(client, "login", #", "username": "demo", "password": "wrong""#)
        #expect(wrong.status == 401)
        #expect(wrong.json["view"]?["message"] == "Wrong username or password.")
        #expect(wrong.json["version"]?.integerValue == before + 1)
        #expect(try client.get("/api/state").json == Self.state(wrong.json))
    }

    @Test func aLaunchOnTheListThatChangesNothingKeepsTheVersion() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try ShellAPITests.login(client)
        let list = try ShellAPITests.act(client, "launch", #", "source": "notification""#).json
        #expect(list["stack"] == ["main", "list"])
        let again = try ShellAPITests.act(client, "launch", #", "source": "notification""#)
        #expect(again.status == 200)
        #expect(again.json == list)
    }

    /// A 400 (and a 415) is the request's own mistake: `{"error"}` alone, and nothing changes.
    @Test(arguments: [
        #"{"action": "fly"}"#, #"{"action": 3}"#, #"[1, 2]"#, #"{"action": "login""#,
        #"{"action": "login", "username": "demo"}"#, #"{"action": "login", "password": "appshell"}"#,
        #"{"action": "launch"}"#, #"{"action": "launch", "source": "email"}"#,
    ])
    func aMalformedActionIs400WithTheErrorAlone(body: String) throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        let before = try client.get("/api/state").json
        let response = try client.postJSON("/api/actions", body)
        #expect(response.status == 400)
        #expect(Self.keys(response.json) == ["error"], "\(response.text)")
        #expect(response.json["error"]?.stringValue?.isEmpty == false)
        #expect(try client.get("/api/state").json == before)
    }

    @Test func anotherContentTypeIs415WithTheErrorAlone() throws {
        let (_, live) = try ShellAPITests.start()
        let response = try live.client().postForm("/api/actions", "action=logout")
        #expect(response.status == 415)
        #expect(Self.keys(response.json) == ["error"])
    }

    /// 401, 409 and 429 depend on the session's state: the answer is the state with `error`.
    @Test func refusalsTheStateDecidesCarryTheState() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let refused = try ShellAPITests.act(client, "showList")
        #expect(refused.status == 409)
        #expect(Self.keys(refused.json) == Self.stateKeys.union(["error"]))
        for _ in 0..<5 {
            let wrong = try ShellAPITests.act(client, "login", #", "username": "demo", "password": "x""#)
            #expect(wrong.status == 401)
            #expect(Self.keys(wrong.json) == Self.stateKeys.union(["error"]))
        }
        let limited = try ShellAPITests.login(client)
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"].flatMap { Int($0) }.map { $0 > 0 } == true)
        #expect(Self.keys(limited.json) == Self.stateKeys.union(["error"]))
        #expect(limited.json["screen"] == "login")
    }

    @Test func anotherSitesOriginIs403WithTheErrorAlone() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        let before = try client.get("/api/state").json
        let response = try client.postJSON(
            "/api/actions", #"{"action": "launch", "source": "notification"}"#,
            headers: [("Origin", "https://evil.example")])
        #expect(response.status == 403)
        #expect(Self.keys(response.json) == ["error"])
        #expect(try client.get("/api/state").json == before)
    }

    /// The forms split errors the same way: a malformed form is a 400 page, a refusal leads back.
    @Test func aFormWithAFieldMissingIs400AndARefusalLeadsBack() throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        let token = try PageTests.token(try PageTests.html(client, "/login").text)
        let before = try client.get("/api/state").json
        let html = [("Accept", "text/html")]
        let missing = try client.postForm("/actions", "csrf=\(token)&action=login&username=demo", headers: html)
        #expect(missing.status == 400)
        #expect(missing.text.contains("login needs"), "\(missing.text)")
        let launch = try client.postForm("/actions", "csrf=\(token)&action=launch", headers: html)
        #expect(launch.status == 400)
        #expect(try client.get("/api/state").json == before)
        let refused = try client.postForm("/actions", "csrf=\(token)&action=showList", headers: html)
        #expect(refused.status == 303)
    }
}
