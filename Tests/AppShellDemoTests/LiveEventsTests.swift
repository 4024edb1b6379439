import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// What an open page hears: its session's changes however the session's app was rebuilt (it left
/// memory, the server restarted), and the current state whenever it resumes with an event id the
/// session's app did not send.
@Suite struct LiveEventsTests {
    /// A demo app on the memory store holding at most `maxSessionsInMemory` sessions in memory.
    static func start(maxSessionsInMemory: Int = 100_000) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.sessions.maxSessionsInMemory = maxSessionsInMemory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    /// Opens `/api/events` with `cookie` (and `Last-Event-ID` when given); returns the connection
    /// and the response head.
    static func openStream(_ port: Int, cookie: String?, lastEventID: String? = nil) throws -> (RawConnection, String) {
        let stream = try RawConnection(port: port)
        let cookieLine = cookie.map { "Cookie: \($0)\r\n" } ?? ""
        let resumeLine = lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? ""
        try stream.send("GET /api/events HTTP/1.1\r\nHost: localhost\r\n\(cookieLine)\(resumeLine)\r\n")
        return (stream, try stream.read(through: "\r\n\r\n"))
    }

    /// The `id:` of the first event in `text`.
    static func eventID(_ text: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
    }

    @Test func aStreamHearsItsSessionAfterTheSessionLeftMemory() throws {
        let (app, live) = try Self.start(maxSessionsInMemory: 1)
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        let (stream, head) = try Self.openStream(live.port, cookie: SessionIsolationTests.cookieHeader(client))
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(try stream.read(through: "}\n\n").contains("\"screen\":\"main\""))

        // Other visitors push the session out of memory (it stays in the store).
        for _ in 0..<64 where app.sessions.heldCount > 0 { _ = try live.client().get("/api/state") }
        #expect(app.sessions.heldCount == 0, "the logged-in session did not leave memory")

        // Its app is rebuilt from the snapshot for this action: the open page hears the change.
        #expect(try ShellAPITests.act(client, "showList").json["screen"] == "list")
        let event = try stream.read(through: "}\n\n")
        #expect(event.contains("event: state"))
        #expect(event.contains("\"screen\":\"list\""))
    }
}

extension LiveEventsTests {
    /// A logged-in client of a fresh server and its cookie.
    static func loggedIn(_ live: LiveServer) throws -> (TestClient, String) {
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        return (client, SessionIsolationTests.cookieHeader(client))
    }

    @Test(arguments: ["99", "999999", "not-an-id", "0", "someone-else.3"])
    func aResumeThisAppDidNotSendGetsTheCurrentState(lastEventID: String) throws {
        let (_, live) = try Self.start()
        let (_, cookie) = try Self.loggedIn(live)
        let (stream, head) = try Self.openStream(live.port, cookie: cookie, lastEventID: lastEventID)
        #expect(head.hasPrefix("HTTP/1.1 200"))
        let event = try stream.read(through: "}\n\n")
        #expect(event.contains("event: state"))
        #expect(event.contains("\"screen\":\"main\""))
    }

    @Test func aResumeWithTheCurrentIDGetsOnlyWhatFollows() throws {
        let (_, live) = try Self.start()
        let (client, cookie) = try Self.loggedIn(live)
        let (first, _) = try Self.openStream(live.port, cookie: cookie)
        let current = try #require(Self.eventID(try first.read(through: "}\n\n")))
        let version = try #require(client.get("/api/state").json["version"]?.integerValue)
        #expect(current.hasSuffix(".\(version)"), "the id \(current) does not end with the version \(version)")

        let (resumed, _) = try Self.openStream(live.port, cookie: cookie, lastEventID: current)
        #expect(try ShellAPITests.act(client, "showList").status == 200)
        let next = try resumed.read(through: "}\n\n")
        #expect(next.contains("\"screen\":\"list\""), "the resumed stream first got \(next)")
        let nextID = try #require(Self.eventID(next))
        #expect(nextID.hasSuffix(".\(version + 1)"))
        #expect(nextID.dropLast("\(version + 1)".count) == current.dropLast("\(version)".count))
    }

    /// After a restart with the memory store the cookie names nothing: the stream answers with the
    /// new session's state under another line of ids, whatever the version it resumed from.
    @Test func aResumeAfterTheSessionWasLostGetsTheNewSessionsState() throws {
        let (_, first) = try Self.start()
        let (_, cookie) = try Self.loggedIn(first)
        let (stream, _) = try Self.openStream(first.port, cookie: cookie)
        let lastID = try #require(Self.eventID(try stream.read(through: "}\n\n")))

        let (_, restarted) = try Self.start()
        let (lost, head) = try Self.openStream(restarted.port, cookie: cookie, lastEventID: lastID)
        #expect(head.contains("Set-Cookie"))
        let event = try lost.read(through: "}\n\n")
        #expect(event.contains("\"screen\":\"login\""))
        let newID = try #require(Self.eventID(event))
        #expect(newID.split(separator: ".").first != lastID.split(separator: ".").first)
    }
}

/// Streams of sessions that ended while nobody asked: they end too, so the page reconnects.
extension LiveEventsTests {
    @Test func theStreamOfASessionThatLeftMemoryHoldingNothingEnds() throws {
        let (app, live) = try Self.start(maxSessionsInMemory: 1)
        let client = live.client()
        #expect(try client.get("/api/state").json["screen"] == "login")
        let (stream, _) = try Self.openStream(live.port, cookie: SessionIsolationTests.cookieHeader(client))
        #expect(try stream.read(through: "}\n\n").contains("\"screen\":\"login\""))
        #expect(app.shell.endStreamsOfEndedSessions() == 0, "a live session's stream was ended")

        // A logged-out visitor holds nothing worth storing: pushed out of memory, it is gone.
        for _ in 0..<64 where app.sessions.heldCount > 0 { _ = try live.client().get("/api/state") }
        #expect(app.sessions.heldCount == 0)
        #expect(app.shell.endStreamsOfEndedSessions() == 1)
        _ = try stream.read(through: SessionIsolationTests.streamEnd)
        #expect(app.shell.events.count == 0)
    }

    @Test func theStreamOfAStoredSessionThatLeftMemoryStaysOpen() throws {
        let (app, live) = try Self.start(maxSessionsInMemory: 1)
        let (_, cookie) = try Self.loggedIn(live)
        let (stream, _) = try Self.openStream(live.port, cookie: cookie)
        _ = try stream.read(through: "}\n\n")
        for _ in 0..<64 where app.sessions.heldCount > 0 { _ = try live.client().get("/api/state") }
        #expect(app.sessions.heldCount == 0)
        #expect(app.shell.endStreamsOfEndedSessions() == 0)
        #expect(app.shell.events.count == 1)
    }

    @Test func theStreamOfAnExpiredSessionEnds() throws {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.sessions.idleTimeoutSeconds = 1
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        // The login must finish within the second the session lives: a password check that costs
        // nothing (an Argon2id check at a low priority on a machine the other suites keep busy
        // took longer, and the session expired before the login ended).
        let app = try DemoServer(
            configuration: configuration, verifyPassword: { password, _ in password == "appshell" })
        let live = try LiveServer(responder: try app.makeResponder())
        let (_, cookie) = try Self.loggedIn(live)
        let (stream, _) = try Self.openStream(live.port, cookie: cookie)
        _ = try stream.read(through: "}\n\n")
        #expect(app.shell.endStreamsOfEndedSessions() == 0)
        var ended = 0
        let deadline = Date(timeIntervalSinceNow: 60)
        while ended == 0 && Date() < deadline {
            usleep(100_000)
            ended = app.shell.endStreamsOfEndedSessions()
        }
        #expect(ended == 1, "the expired session's stream was not ended")
        _ = try stream.read(through: SessionIsolationTests.streamEnd)
    }
}
