import AppShell
import AppShellDemo
import AppShellSessions
import AppShellTesting
import Testing

/// What a session's app costs after it leaves memory: nothing. Sessions come and go all day; an
/// app kept alive by a reference cycle would grow the server with every session that ever lived.
@Suite struct SessionMemoryTests {
    /// The live app of the session `client`'s cookie names.
    static func liveApp(_ app: DemoServer, _ client: TestClient) throws -> LiveApp? {
        let text = try #require(client.cookies[app.cookie.name])
        let id = try #require(SessionID(text))
        return try app.sessions.withLiveSession(id) { $0.attachment as? LiveApp } ?? nil
    }

    @Test func anAppPushedOutOfMemoryIsFreed() throws {
        let (app, live) = try ShellAPITests.start(maxSessionsInMemory: 1)
        let first = live.client()
        _ = try first.get("/api/state")
        #expect(try ShellAPITests.login(first).status == 200)
        #expect(try ShellAPITests.act(first, "remind").status == 200)
        #expect(try ShellAPITests.act(first, "showList").status == 200)
        #expect(try ShellAPITests.act(first, "pop").status == 200)
        #expect(try ShellAPITests.act(first, "presentSecond").status == 200)
        let firstID = try #require(SessionID(first.cookies[app.cookie.name] ?? ""))
        weak let shell = try Self.liveApp(app, first)
        weak let root = shell?.root
        #expect(shell != nil)

        // Another session takes the only place in memory.
        let second = live.client()
        _ = try second.get("/api/state")
        #expect(try ShellAPITests.login(second).status == 200)
        #expect(app.sessions.count == 1)
        #expect(!app.sessions.holdsInMemory(firstID))
        #expect(shell == nil, "the app of a session that left memory is still alive")
        #expect(root == nil, "the root controller of a session that left memory is still alive")
    }

    @Test func anAppTheSessionLetsGoOfIsFreed() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        #expect(try ShellAPITests.act(client, "logout").status == 200)
        weak let shell = try Self.liveApp(app, client)
        #expect(shell != nil)
        // The session drops its app, as after a failed commit: the app must go with it.
        let id = try #require(SessionID(client.cookies[app.cookie.name] ?? ""))
        _ = try app.sessions.withLiveSession(id) { $0.attachment = nil }
        #expect(shell == nil, "an app the session let go of is still alive")
    }

    /// A page whose URL is longer than any of the app's own is answered, not kept with the session
    /// (issue 31, finding 2). Fails on the code before: the 3 000-byte URL stayed in the page cache.
    @Test func aPageOfALongURLIsNotKept() throws {
        let (app, live) = try PageTests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let page = try PageTests.html(client, "/login?junk=" + String(repeating: "j", count: 3000))
        #expect(page.status == 200)
        #expect(try Self.liveApp(app, client)?.keptPageTarget == nil)
        // A page is kept once it is asked for a second time.
        _ = try PageTests.html(client, "/login")
        #expect(try Self.liveApp(app, client)?.keptPageTarget == nil)
        _ = try PageTests.html(client, "/login")
        #expect(try Self.liveApp(app, client)?.keptPageTarget == "/login")
    }

    /// The answers the live apps keep hold no more than `maxCachedAnswerBytes` in all, and give it
    /// back when their session leaves memory (issue 31, finding 2). Fails on the code before: the
    /// state was kept whatever the bytes already kept.
    @Test func keptAnswersStayWithinTheirBudget() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        _ = try client.get("/api/state")
        #expect(try Self.liveApp(app, client)?.keepsState == true)
        #expect(app.shell.keptAnswerBytes > 0)
        let none = try ShellAPITests.makeApp(splashDelay: 0, maxSessionsInMemory: 1) {
            $0.shell.maxCachedAnswerBytes = 0
        }
        let server = try LiveServer(responder: try none.makeResponder())
        let reader = server.client()
        _ = try reader.get("/api/state")
        #expect(try reader.get("/api/state").status == 200)
        #expect(try reader.get("/api/state").status == 200)
        #expect(try Self.liveApp(none, reader)?.keepsState == false)
        #expect(none.shell.keptAnswerBytes == 0)
        // With room, a session's kept state is given back when it leaves memory.
        let one = try ShellAPITests.makeApp(splashDelay: 0, maxSessionsInMemory: 1)
        let oneServer = try LiveServer(responder: try one.makeResponder())
        let first = oneServer.client()
        _ = try first.get("/api/state")
        #expect(try ShellAPITests.login(first).status == 200)
        _ = try first.get("/api/state")
        #expect(one.shell.keptAnswerBytes > 0)
        let firstID = try #require(SessionID(first.cookies[one.cookie.name] ?? ""))
        let second = oneServer.client()
        _ = try second.get("/api/state")
        #expect(try ShellAPITests.login(second).status == 200)
        #expect(!one.sessions.holdsInMemory(firstID))
        #expect(one.shell.keptAnswerBytes == (try Self.liveApp(one, second)?.keptAnswerBytes ?? -1))
    }
}
