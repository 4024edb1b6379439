import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// Who can see a session, what a failed write leaves behind, and what a visitor who holds nothing
/// costs — against a live server.
@Suite struct SessionIsolationTests {
    /// The last chunk of a chunked response: the stream ended.
    static let streamEnd = "\r\n0\r\n\r\n"

    static func cookieHeader(_ client: TestClient) -> String {
        client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }

    /// Opens `/api/events` with `cookie`; returns the connection and the response head.
    static func openStream(_ port: Int, cookie: String?) throws -> (RawConnection, String) {
        let stream = try RawConnection(port: port)
        let cookieLine = cookie.map { "Cookie: \($0)\r\n" } ?? ""
        try stream.send("GET /api/events HTTP/1.1\r\nHost: localhost\r\n\(cookieLine)\r\n")
        return (stream, try stream.read(through: "\r\n\r\n"))
    }

    @Test func aStreamOpenedBeforeLoginEndsAtLoginAndNeverCarriesTheLoggedInState() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let before = Self.cookieHeader(client)
        let (stream, head) = try Self.openStream(live.port, cookie: before)
        #expect(head.hasPrefix("HTTP/1.1 200"))
        let initial = try stream.read(through: "}\n\n")
        #expect(initial.contains("\"screen\":\"login\""))

        #expect(try ShellAPITests.login(client).status == 200)
        #expect(Self.cookieHeader(client) != before)
        let rest = try stream.read(through: Self.streamEnd)
        #expect(!rest.contains("event: state"), "the old id's stream got the state after login")
        #expect(!rest.contains("demo"))
        #expect(app.shell.events.count == 0)
    }

    @Test func aStreamOpenedWhileLoggedInEndsAtLogout() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        let loggedIn = Self.cookieHeader(client)
        let (stream, _) = try Self.openStream(live.port, cookie: loggedIn)
        _ = try stream.read(through: "}\n\n")

        #expect(try ShellAPITests.act(client, "logout").status == 200)
        #expect(Self.cookieHeader(client) != loggedIn)
        let rest = try stream.read(through: Self.streamEnd)
        #expect(!rest.contains("event: state"), "the old id's stream got the state after logout")
        #expect(app.shell.events.count == 0)
        // The streams of the new id work as before.
        let (next, _) = try Self.openStream(live.port, cookie: Self.cookieHeader(client))
        #expect(try next.read(through: "}\n\n").contains("\"screen\":\"login\""))
    }

    @Test func aSessionHasAtMostEightStreams() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let cookie = Self.cookieHeader(client)
        var open: [RawConnection] = []
        for _ in 0..<ShellEvents.defaultMaxStreamsPerSession {
            let (stream, head) = try Self.openStream(live.port, cookie: cookie)
            #expect(head.hasPrefix("HTTP/1.1 200"))
            _ = try stream.read(through: "}\n\n")
            open.append(stream)
        }
        let (refused, head) = try Self.openStream(live.port, cookie: cookie)
        #expect(head.hasPrefix("HTTP/1.1 429"))
        #expect(head.contains("application/json"))
        #expect(try refused.read(through: "}").contains("\"error\""))
        #expect(app.shell.events.count == ShellEvents.defaultMaxStreamsPerSession)
    }

    /// Cookieless requests to every route leave a map entry each at most: no session object, no
    /// app, no stream, no store row — and no GET changes a session.
    @Test func cookielessRequestsOnEveryRouteCostAMapEntry() throws {
        let (app, live) = try ShellAPITests.start(splashDelay: 60_000)
        func expectNothingHeld(after route: String) throws {
            #expect(app.sessions.heldCount == 0, "cookieless requests to \(route) made session objects")
            #expect(try app.sessions.backend.count() == 0, "cookieless requests to \(route) wrote to the store")
        }
        for path in ["/", "/login", "/main", "/?launch=notification", "/api/state", "/nowhere"] {
            for _ in 0..<5 { _ = try live.client().get(path, headers: [("Accept", "text/html")]) }
            try expectNothingHeld(after: path)
        }
        for _ in 0..<5 { #expect(try live.client().postForm("/actions", "action=logout").status == 403) }
        try expectNothingHeld(after: "POST /actions")
        for _ in 0..<5 { #expect(try ShellAPITests.act(live.client(), "logout").status == 409) }
        try expectNothingHeld(after: "POST /api/actions")
        for _ in 0..<5 {
            let (stream, head) = try Self.openStream(live.port, cookie: nil)
            #expect(head.hasPrefix("HTTP/1.1 200"))
            let body = try stream.read(through: Self.streamEnd)
            #expect(body.contains("\"screen\":\"splash\""))
        }
        try expectNothingHeld(after: "/api/events")
        #expect(app.shell.events.count == 0)
        #expect(app.sessions.count == 40, "each cookieless request costs one map entry")
    }

    /// `GET /?launch=notification` changes nothing: it leads to the current page, which carries the
    /// launch as a form (sent by the page's script, or by the user without JavaScript).
    @Test func theLaunchLinkChangesNothingOnGET() throws {
        let (app, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        let before = try client.get("/api/state").json
        let link = try client.get("/?launch=notification", headers: [("Accept", "text/html")])
        #expect(link.status == 303)
        #expect(link.headers["Location"] == "/main?launch=notification")
        let page = try client.get("/main?launch=notification", headers: [("Accept", "text/html")])
        #expect(page.status == 200)
        #expect(page.text.contains("<form id=\"launch\""))
        #expect(page.text.contains("name=\"source\" value=\"notification\""))
        let after = try client.get("/api/state").json
        #expect(after["version"] == before["version"])
        #expect(after["defaults"]?["viewType"] == nil)
        #expect(try app.sessions.backend.count() == 1)
        // The form's POST launches.
        let launched = try ShellAPITests.act(client, "launch", #", "source": "notification""#).json
        #expect(launched["screen"] == "list")
    }

    /// A launch link followed from another site is not offered the launch form (the page's script
    /// would send it at once); a direct or same-origin navigation is (issue 31, finding 9). Fails on
    /// the code before: the cross-site navigation's page carried the form.
    @Test(arguments: [("cross-site", false), ("same-site", false), ("same-origin", true), ("none", true)])
    func aLaunchLinkFromAnotherSiteIsNotOffered(site: String, offered: Bool) throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        let page = try client.get(
            "/main?launch=notification", headers: [("Accept", "text/html"), ("Sec-Fetch-Site", site)])
        #expect(page.status == 200)
        #expect(page.text.contains("<form id=\"launch\"") == offered)
    }
}

/// A store that refuses writes: a real SQLite file on a small tmpfs that is filled up.
@Suite(.serialized) struct FailedCommitTests {
    /// A mounted tmpfs of 1 MiB; `nil` when mounting is impossible here (not root, no tmpfs).
    final class SmallDisk {
        let path: String
        private var filler: FileHandle?

        init?() {
            path = NSTemporaryDirectory() + "appshell-full-\(UUID().uuidString)"
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", path]) else {
                try? FileManager.default.removeItem(atPath: path)
                return nil
            }
        }

        /// Writes a file until the disk is full.
        func fill() {
            let file = path + "/filler"
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            let handle = FileHandle(forWritingAtPath: file)!
            let block = Data(count: 4096)
            while (try? handle.write(contentsOf: block)) != nil {}
            filler = handle
        }

        func free() {
            try? filler?.close()
            filler = nil
            try? FileManager.default.removeItem(atPath: path + "/filler")
        }

        /// Unmounts and removes the disk. A process that still has a file open on it (the server
        /// under test, not stopped yet) makes a plain unmount fail: then it is detached at once
        /// (`--lazy`) and freed when that file closes, so that no mount is ever left behind.
        func remove() {
            free()
            guard FileManager.default.fileExists(atPath: path) else { return }
            if !Self.run("/bin/umount", [path]) { _ = Self.run("/bin/umount", ["--lazy", path]) }
            try? FileManager.default.removeItem(atPath: path)
        }

        deinit { remove() }

        static func run(_ tool: String, _ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
    }

    static func start(
        _ disk: SmallDisk, idleTimeout: Int64 = 1800, splashDelay: Int = 0
    ) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .sqlite
        configuration.storePath = disk.path + "/sessions.sqlite"
        configuration.splashDelayMilliseconds = splashDelay
        configuration.sessions.idleTimeoutSeconds = idleTimeout
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    @Test func aLoginWhoseWriteFailsChangesNothing() throws {
        guard let disk = SmallDisk() else {
            print("SKIPPED aLoginWhoseWriteFailsChangesNothing: cannot mount a tmpfs here (needs root)")
            return
        }
        defer { disk.remove() }
        let (app, live) = try Self.start(disk)
        let client = live.client()
        _ = try client.get("/api/state")
        let before = try client.get("/api/state").json
        #expect(before["screen"] == "login")
        let cookie = SessionIsolationTests.cookieHeader(client)
        let (stream, _) = try SessionIsolationTests.openStream(live.port, cookie: cookie)
        _ = try stream.read(through: "}\n\n")

        disk.fill()
        let login = try ShellAPITests.login(client)
        #expect(login.status == 503)
        #expect(login.headers["Content-Type"]?.contains("json") == true)
        #expect(login.json["error"]?.stringValue?.isEmpty == false)
        #expect(SessionIsolationTests.cookieHeader(client) == cookie, "a failed login changed the cookie")
        // Nothing reached the stream (it ends: its app is rebuilt from the last commit).
        let rest = try stream.read(through: SessionIsolationTests.streamEnd)
        #expect(!rest.contains("event: state"), "the failed login's state was published")
        disk.free()

        let after = try client.get("/api/state")
        #expect(after.headers["Set-Cookie"] == nil, "the old id no longer names the session")
        #expect(after.json["screen"] == "login")
        #expect(after.json["version"] == before["version"])
        #expect(after.json["defaults"] == before["defaults"])
        #expect(app.shell.events.count == 0)
        // The same login now succeeds.
        #expect(try ShellAPITests.login(client).status == 200)
        #expect(try client.get("/api/state").json["screen"] == "main")
    }

    /// A stream whose answer became a 503 (the commit failed after the handler made it) is not
    /// left subscribed.
    @Test func aStreamWhoseCommitFailsIsNotKept() throws {
        guard let disk = SmallDisk() else {
            print("SKIPPED aStreamWhoseCommitFailsIsNotKept: cannot mount a tmpfs here (needs root)")
            return
        }
        defer { disk.remove() }
        // A session stored while its splash runs (a launch sets a value): the stream that finds
        // the splash done routes it, and that change cannot be committed.
        let (app, live) = try Self.start(disk, splashDelay: 1000)
        let client = live.client()
        #expect(try client.get("/api/state").json["screen"] == "splash")
        #expect(try ShellAPITests.act(client, "launch", #", "source": "notification""#).status == 200)
        disk.fill()
        Thread.sleep(forTimeInterval: 1.2)
        let (_, head) = try SessionIsolationTests.openStream(
            live.port, cookie: SessionIsolationTests.cookieHeader(client))
        #expect(head.hasPrefix("HTTP/1.1 503"))
        #expect(app.shell.events.count == 0, "a stream never sent stayed subscribed")
        disk.free()
    }
}
