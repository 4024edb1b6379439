import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The OWASP Session Management Cheat Sheet, point by point, against a live demo server: each test
/// is named after the cheat sheet's point it checks. Many of these are also checked where the
/// mechanism lives (SessionHTTPTests, SessionIsolationTests, LoginLimitTests, AllowedHostsTests);
/// this file is the checklist in one place.
@Suite struct OWASPSessionChecklistTests {
    static let cookieName = "appshell_session"

    /// The `Set-Cookie` value of `response` for the session cookie, if any.
    static func sessionCookie(_ response: TestResponse, name: String = cookieName) -> String? {
        guard let header = response.headers["Set-Cookie"], header.hasPrefix(name + "=") else { return nil }
        return String(header.dropFirst(name.count + 1).prefix { $0 != ";" })
    }

    /// A client holding a logged-in session.
    static func loggedIn(_ live: LiveServer) throws -> TestClient {
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        return client
    }

    /// A client whose session is logged in and still live, for a test of a timeout of a few
    /// seconds: on a busy machine the login (an Argon2id check) can outlast such a timeout, so that
    /// session ended before the test began — a setup that did not happen, so it is tried again with
    /// a new session (a server that ends every session at once still fails after `attempts`).
    static func loggedInAndLive(_ live: LiveServer, attempts: Int = 5) throws -> TestClient {
        for _ in 0..<attempts {
            let client = live.client()
            _ = try client.get("/api/state")
            guard try ShellAPITests.login(client).status == 200 else { continue }
            let state = try client.get("/api/state")
            if state.headers["Set-Cookie"] == nil && state.json["screen"] == "main" { return client }
        }
        throw TestClientError(description: "no session stayed logged in in \(attempts) attempts")
    }

    /// A client that presents `id` and keeps it whatever the server answers.
    static func presenting(_ id: String, _ live: LiveServer) -> TestClient {
        let client = live.client()
        client.cookies[cookieName] = id
        return client
    }

    // MARK: Session ID properties

    /// "Session ID Entropy" and "Session ID Length": 256 bits from the kernel's CSPRNG, written as
    /// 43 base64url characters. Over many ids: all distinct, all in the alphabet with zero padding
    /// bits, no shared prefix, and every one of the 256 bits set in about half of them (a counter,
    /// a timestamp or a weak generator would leave bits fixed or skewed).
    @Test func sessionIDEntropyAndLength() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let count = 1000
        var ids: Set<String> = []
        var prefixes: Set<String> = []
        var ones = [Int](repeating: 0, count: 256)
        let client = live.client()
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in 0..<count {
            client.cookies = [:]
            let value = try #require(Self.sessionCookie(try client.get("/api/state")))
            #expect(value.count == 43)
            #expect(value.allSatisfy { alphabet.contains($0) }, "\(value)")
            let id = try #require(SessionID(value), "not a valid id: \(value)")
            let bytes = id.bytes
            #expect(bytes.count == 32)
            for bit in 0..<256 where bytes[bit / 8] & (1 << (bit % 8)) != 0 { ones[bit] += 1 }
            ids.insert(value)
            prefixes.insert(String(value.prefix(8)))
        }
        #expect(ids.count == count, "ids repeated")
        #expect(prefixes.count == count, "ids share prefixes")
        // Each bit is set in count/2 ± 16 (one standard deviation) of ids; 35–65 % is ±9.5σ.
        for bit in 0..<256 {
            #expect(
                (count * 35 / 100...count * 65 / 100).contains(ones[bit]), "bit \(bit) set in \(ones[bit]) of \(count)")
        }
    }

    /// "Session ID Content (or Value)" and "Session ID Exchange Mechanism": the id travels only in
    /// the cookie. Pages, the state and the event stream never carry it, and an id in the URL is
    /// not taken.
    @Test func sessionIDExchangeMechanismIsTheCookieOnly() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = try Self.loggedIn(live)
        let id = try #require(client.cookies[Self.cookieName])
        let page = try PageTests.html(client, "/main")
        #expect(page.status == 200)
        #expect(!page.text.contains(id))
        #expect(!(try client.get("/api/state")).text.contains(id))
        let (stream, _) = try SessionIsolationTests.openStream(live.port, cookie: "\(Self.cookieName)=\(id)")
        #expect(!(try stream.read(through: "}\n\n")).contains(id))
        // The id in the query instead of the cookie is a new visitor's request.
        let other = live.client()
        let viaURL = try other.get("/api/state?\(Self.cookieName)=\(id)")
        #expect(viaURL.json["screen"] == "login")
        #expect(Self.sessionCookie(viaURL) != id)
    }

    // MARK: Cookies

    /// "Cookies": `HttpOnly`, `SameSite=Lax`, `Path=/`, no `Domain` (host-only), no `Expires` or
    /// `Max-Age` (a session cookie: the server's timeouts end the session); with `secureCookies`
    /// also `Secure` and the `__Host-` prefix. The same on a new session and after a rotation.
    @Test(arguments: [false, true])
    func cookieAttributes(secure: Bool) throws {
        let (_, live) = try AllowedHostsTests.start { $0.secureCookies = secure }
        defer { _ = live.stop() }
        let name = (secure ? "__Host-" : "") + Self.cookieName
        let client = live.client()
        let first = try client.get("/api/state")
        let login = try ShellAPITests.login(client)
        #expect(login.status == 200)
        for response in [first, login] {
            let header = try #require(response.headers["Set-Cookie"])
            let value = try #require(Self.sessionCookie(response, name: name), "\(header)")
            #expect(header == "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : ""))
            let attributes = header.lowercased()
            for forbidden in ["domain=", "max-age=", "expires="] { #expect(!attributes.contains(forbidden)) }
        }
    }

    // MARK: Session ID generation and verification

    /// "Session ID Generation and Verification: Permissive and Strict Session Management": an id
    /// the server did not issue — unknown, forged, malformed — is never adopted. The request gets
    /// a new session with a new id in a new cookie, on the API, the pages, the stream and actions,
    /// and presenting the same value again gets yet another one.
    @Test(arguments: [
        SessionID.random().text, String(repeating: "A", count: 43), String(repeating: "A", count: 42) + "B",
        "forged", "", String(repeating: "x", count: 2000), "\(SessionID.random().text)x",
        String(SessionID.random().text.dropLast()) + "=", "../../etc/passwd",
    ])
    func strictSessionManagement(presented: String) throws {
        let (app, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        var issued: Set<String> = []
        for (method, target) in [
            ("GET", "/api/state"), ("GET", "/"), ("GET", "/api/events"), ("POST", "/api/actions"),
            ("GET", "/api/state"),
        ] {
            let client = Self.presenting(presented, live)
            let response =
                method == "POST"
                ? try client.postJSON(target, #"{"action": "launch", "source": "notification"}"#)
                : try client.get(target)
            let value = try #require(Self.sessionCookie(response), "\(method) \(target) gave no new cookie")
            #expect(value != presented, "\(method) \(target) adopted the presented id")
            #expect(SessionID(value) != nil)
            issued.insert(value)
            if method == "GET", target == "/api/state" {
                // A new visitor's state: at login (the splash is instant here), nothing stored.
                #expect(response.json["screen"] == "login")
                #expect(response.json["defaults"] == [:])
            }
        }
        #expect(issued.count == 5, "a new id for every request")
        if let id = SessionID(presented) { #expect(try !app.sessions.names(id)) }
    }

    // MARK: Renewal

    /// "Renew the Session ID After Any Privilege Level Change": login and logout each give a new
    /// id (a failed login gives none); the three ids differ.
    @Test func renewTheSessionIDAfterAnyPrivilegeLevelChange() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = live.client()
        let visitor = try #require(Self.sessionCookie(try client.get("/api/state")))
        let failed = try LoginLimitTests.wrong(client)
        #expect(failed.status == 401)
        #expect(failed.headers["Set-Cookie"] == nil, "a failed login changed the id")
        let login = try ShellAPITests.login(client)
        let member = try #require(Self.sessionCookie(login), "login kept the id")
        let logout = try ShellAPITests.act(client, "logout")
        #expect(logout.status == 200)
        let loggedOut = try #require(Self.sessionCookie(logout), "logout kept the id")
        #expect(Set([visitor, member, loggedOut]).count == 3)
    }

    /// The old id after a rotation names nothing, on pages, the API and streams. For 10 s it gets
    /// no session and no `Set-Cookie` (the Security article, "Sessions"): what a new visitor
    /// sees, actions 409, a form 303 to `/`, a stream its end — never the logged-in session;
    /// after that it is unknown, and gets a new session and cookie like any unknown id.
    @Test func theOldIDIsDeadAfterRotation() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = live.client()
        _ = try client.get("/api/state")
        let old = try #require(client.cookies[Self.cookieName])
        let token = try PageTests.token(try PageTests.html(client, "/login").text)
        #expect(try ShellAPITests.login(client).status == 200)
        let attacker = Self.presenting(old, live)

        // A new visitor's app (at the splash: it is made for the request and dropped).
        let state = try attacker.get("/api/state")
        #expect(["splash", "login"].contains(state.json["screen"]?.stringValue))
        #expect(state.json["defaults"] == [:])
        #expect(!state.text.contains("demo"))
        let page = try PageTests.html(attacker, "/main")
        #expect(page.status == 200 || page.status == 303)
        #expect(!page.text.contains("data-screen=\"main\""))
        let action = try ShellAPITests.act(attacker, "logout")
        #expect(action.status == 409)
        let form = try attacker.postForm("/actions", "csrf=\(PercentEncoding.encode(token))&action=logout")
        #expect(form.status == 303 || form.status == 403, "\(form.status)")
        let (stream, head) = try SessionIsolationTests.openStream(live.port, cookie: "\(Self.cookieName)=\(old)")
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(!head.contains("Set-Cookie"))
        // The stream ends with no event: its body is the last chunk alone.
        #expect(!(try stream.read(through: "0\r\n\r\n")).contains("event: state"))
        for response in [state, page, action, form] {
            #expect(response.headers["Set-Cookie"] == nil, "a retired id was given a cookie")
        }
        #expect(attacker.cookies[Self.cookieName] == old)
        // The session itself is untouched, under its new id.
        #expect(try client.get("/api/state").json["screen"] == "main")
        // Once the grace period is over the old id is unknown: a new visitor, with a new cookie,
        // and still never the logged-in session.
        var renewed: String?
        for _ in 0..<100 where renewed == nil {
            Thread.sleep(forTimeInterval: 0.25)
            let later = Self.presenting(old, live)
            let response = try later.get("/api/state")
            #expect(response.json["screen"] != "main")
            renewed = Self.sessionCookie(response)
        }
        let fresh = try #require(renewed, "the retired id never became unknown")
        #expect(fresh != old)
    }

    // MARK: Expiration

    /// "Session Expiration: Idle Timeout": a session unused for longer than
    /// `sessionIdleTimeoutSeconds` is gone; its id gets a new session and a new cookie.
    @Test func idleTimeout() throws {
        let (_, live) = try AllowedHostsTests.start { $0.sessions.idleTimeoutSeconds = 2 }
        defer { _ = live.stop() }
        let client = try Self.loggedInAndLive(live)
        let id = try #require(client.cookies[Self.cookieName])
        // Idle past the timeout (a busy machine only makes the pause longer).
        Thread.sleep(forTimeInterval: 3.5)
        let after = try client.get("/api/state")
        #expect(after.json["screen"] == "login")
        #expect(after.json["defaults"] == [:])
        let renewed = try #require(Self.sessionCookie(after))
        #expect(renewed != id)
    }

    /// "Session Expiration: Absolute Timeout": a session in constant use still ends
    /// `sessionAbsoluteTimeoutSeconds` after it began.
    @Test func absoluteTimeout() throws {
        let (_, live) = try AllowedHostsTests.start {
            $0.sessions.idleTimeoutSeconds = 600
            $0.sessions.absoluteTimeoutSeconds = 2
        }
        defer { _ = live.stop() }
        let client = try Self.loggedInAndLive(live)
        let id = try #require(client.cookies[Self.cookieName])
        var ended: TestResponse?
        // Used every 0.2 s (never idle); it must end within a generous limit (60 s, far past 2 s).
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            let response = try client.get("/api/state")
            if response.headers["Set-Cookie"] != nil {
                ended = response
                break
            }
            #expect(response.json["screen"] == "main")
            Thread.sleep(forTimeInterval: 0.2)
        }
        let response = try #require(ended, "the session outlived its absolute timeout")
        #expect(response.json["screen"] == "login")
        #expect(Self.sessionCookie(response) != id)
    }

    /// "Manual Session Expiration" (logout): the logged-in id is invalidated on the server, not
    /// only in the browser: the registry no longer names it, and replaying it shows nothing of
    /// the logged-in session.
    @Test func logoutInvalidatesTheSessionOnTheServer() throws {
        let (app, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = try Self.loggedIn(live)
        let loggedIn = try #require(client.cookies[Self.cookieName])
        #expect(try app.sessions.names(try #require(SessionID(loggedIn))))
        #expect(try ShellAPITests.act(client, "logout").status == 200)
        #expect(try !app.sessions.names(try #require(SessionID(loggedIn))))
        let replay = Self.presenting(loggedIn, live)
        let state = try replay.get("/api/state")
        #expect(["splash", "login"].contains(state.json["screen"]?.stringValue))
        #expect(state.json["defaults"] == [:])
        #expect(try ShellAPITests.act(replay, "showList").status == 409)
        #expect(try client.get("/api/state").json["screen"] == "login")
    }

    // MARK: Attacks

    /// Cross-site request forgery (the cheat sheet's SameSite and "Session Attacks Detection"
    /// points, and the CSRF cheat sheet): a form needs its session's token — none, another
    /// session's, or one from before the id rotated is 403 and changes nothing; a JSON action
    /// from another site's `Origin` is 403, and a body a cross-site form can send is 415.
    @Test func csrfTokenAndOriginChecks() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = live.client()
        _ = try client.get("/api/state")
        let beforeLogin = try PageTests.token(try PageTests.html(client, "/login").text)
        #expect(try ShellAPITests.login(client).status == 200)
        let other = live.client()
        _ = try other.get("/api/state")
        let othersToken = try PageTests.token(try PageTests.html(other, "/login").text)
        let version = try client.get("/api/state").json["version"]

        for form in [
            "action=logout", "csrf=&action=logout", "csrf=\(PercentEncoding.encode(othersToken))&action=logout",
            "csrf=\(PercentEncoding.encode(beforeLogin))&action=logout", "csrf=forged&action=logout",
        ] {
            #expect(try client.postForm("/actions", form).status == 403, "\(form)")
        }
        let token = try PageTests.token(try PageTests.html(client, "/main").text)
        let foreign = try client.postForm(
            "/actions", "csrf=\(PercentEncoding.encode(token))&action=logout",
            headers: [("Origin", "https://evil.example")])
        #expect(foreign.status == 403)
        #expect(
            try client.postJSON(
                "/api/actions", #"{"action": "logout"}"#, headers: [("Origin", "https://evil.example")]
            ).status == 403)
        let plain = try client.send(
            "POST", "/api/actions", headers: [("Content-Type", "text/plain")], body: Array(#"{"action":"logout"}"#.utf8)
        )
        #expect(plain.status == 415)
        let state = try client.get("/api/state").json
        #expect(state["screen"] == "main")
        #expect(state["version"] == version)
        // The page's own token, from the page's own origin, works.
        let own = try client.postForm(
            "/actions", "csrf=\(PercentEncoding.encode(token))&action=logout",
            headers: [("Origin", "http://127.0.0.1:\(live.port)")])
        #expect(own.status == 303)
    }

    /// DNS rebinding (the Host a session is served under): a request for a host the server does
    /// not serve gets 421 before any route runs — no session is made, read or changed.
    @Test func allowedHosts() throws {
        let (app, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = try Self.loggedIn(live)
        let sessions = app.sessions.count
        for target in ["/api/state", "/main", "/api/events", "/healthz"] {
            let response = try client.get(target, headers: [("Host", "evil.example")])
            #expect(response.status == 421, "\(target)")
            #expect(response.headers["Set-Cookie"] == nil)
            #expect(!response.text.contains("main"))
        }
        let stranger = live.client()
        #expect(try stranger.get("/api/state", headers: [("Host", "rebind.example:80")]).status == 421)
        #expect(app.sessions.count == sessions, "a misdirected request made a session")
        #expect(try client.get("/api/state").json["screen"] == "main")
    }

    /// "Session Attacks Detection" (brute force on login): past five failures a minute for the
    /// session, a login answers 429 with `Retry-After` without checking the password — the right
    /// password included — and the session stays logged out.
    @Test func loginRateLimits() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = try LoginLimitTests.visitor(live)
        for _ in 1...5 { #expect(try LoginLimitTests.wrong(client).status == 401) }
        let limited = try LoginLimitTests.right(client)
        #expect(limited.status == 429)
        let seconds = try #require(Int(limited.headers["Retry-After"] ?? ""))
        #expect(seconds > 0)
        #expect(limited.json["error"]?.stringValue?.isEmpty == false)
        #expect(limited.headers["Set-Cookie"] == nil)
        #expect(try client.get("/api/state").json["screen"] == "login")
    }

    /// "Web Content Caching": every answer that carries session data — the state, pages and their
    /// redirects, actions and their refusals, forms, streams — is `Cache-Control: no-store`.
    @Test func webContentCachingNoStore() throws {
        let (_, live) = try AllowedHostsTests.start()
        defer { _ = live.stop() }
        let client = live.client()
        var responses: [(String, TestResponse)] = []
        responses.append(("new state", try client.get("/api/state")))
        responses.append(("failed login", try LoginLimitTests.wrong(client)))
        responses.append(("login", try ShellAPITests.login(client)))
        responses.append(("state", try client.get("/api/state")))
        responses.append(("page", try PageTests.html(client, "/main")))
        responses.append(("redirect", try PageTests.html(client, "/")))
        responses.append(("refused action", try ShellAPITests.act(client, "pop")))
        let token = try PageTests.token(try PageTests.html(client, "/main").text)
        responses.append(
            ("form", try client.postForm("/actions", "csrf=\(PercentEncoding.encode(token))&action=showList")))
        for (name, response) in responses {
            #expect(response.headers["Cache-Control"]?.contains("no-store") == true, "\(name): \(response.status)")
        }
        let (stream, head) = try SessionIsolationTests.openStream(
            live.port, cookie: SessionIsolationTests.cookieHeader(client))
        _ = stream
        #expect(head.lowercased().contains("cache-control: no-store"))
    }
}
