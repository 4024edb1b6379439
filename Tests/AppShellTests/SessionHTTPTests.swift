import AppShell
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// Sessions over HTTP against a live server: the cookie, when it is sent, and what never makes one.
@Suite struct SessionHTTPTests {
    struct Fixture {
        let live: LiveServer
        let registry: SessionRegistry
        let backend: MemoryDefaultsBackend
        let cookie: SessionCookie
    }

    static func start(secure: Bool = false, maxSessions: Int = 100_000) throws -> Fixture {
        let backend = MemoryDefaultsBackend()
        var configuration = SessionConfiguration()
        configuration.maxSessionsInMemory = maxSessions
        let registry = SessionRegistry(configuration: configuration, backend: backend)
        let cookie = SessionCookie(baseName: "appshell_session", secure: secure)
        let publicDirectory = PageScriptTests.packageRoot.appendingPathComponent("Public").path
        var router = Router(fallback: try StaticFiles(directory: publicDirectory))
        router.get("/healthz") { _ in .json(["status": "ok"]) }
        router.get(
            "/visits",
            SessionResponder(registry: registry, cookie: cookie) { _, session in
                .text("\(session.defaults.integer(forKey: "visits"))")
            })
        router.post(
            "/visit",
            SessionResponder(registry: registry, cookie: cookie) { _, session in
                session.defaults.set(session.defaults.integer(forKey: "visits") + 1, forKey: "visits")
                return .text("\(session.defaults.integer(forKey: "visits"))")
            })
        router.post(
            "/login",
            SessionResponder(registry: registry, cookie: cookie) { _, session in
                session.defaults.set(true, forKey: "isLogin")
                session.rotateID()
                return .text("ok")
            })
        return Fixture(live: try LiveServer(responder: router), registry: registry, backend: backend, cookie: cookie)
    }

    @Test func aNewSessionGetsAStrictCookieOnce() throws {
        let fixture = try Self.start()
        let client = fixture.live.client()
        let first = try client.send("POST", "/visit")
        let header = try #require(first.headers["Set-Cookie"])
        let value = try #require(client.cookies["appshell_session"])
        #expect(value.utf8.count == 43)
        #expect(header == "appshell_session=\(value); Path=/; HttpOnly; SameSite=Lax")
        let second = try client.send("POST", "/visit")
        #expect(second.text == "2")
        #expect(second.headers["Set-Cookie"] == nil)
        #expect(try client.get("/visits").headers["Set-Cookie"] == nil)
    }

    @Test func secureCookiesUseTheHostPrefix() throws {
        let fixture = try Self.start(secure: true)
        let client = fixture.live.client()
        let header = try #require(try client.get("/visits").headers["Set-Cookie"])
        #expect(header.hasPrefix("__Host-appshell_session="))
        #expect(header.hasSuffix("; Path=/; HttpOnly; SameSite=Lax; Secure"))
        #expect(try client.send("POST", "/visit").headers["Set-Cookie"] == nil)
        #expect(try client.send("POST", "/visit").text == "2")
    }

    @Test func staticFilesHealthAndErrorsNeverMakeASession() throws {
        let fixture = try Self.start()
        let client = fixture.live.client()
        for (path, status) in [("/app.css", 200), ("/healthz", 200), ("/missing.txt", 404)] {
            let response = try client.get(path)
            #expect(response.status == status, "\(path)")
            #expect(response.headers["Set-Cookie"] == nil, "\(path)")
        }
        #expect(fixture.registry.count == 0)
        #expect(client.cookies.isEmpty)
    }

    @Test(arguments: [
        "forged", String(repeating: "A", count: 43), SessionID.random().text, "\(SessionID.random().text)x",
    ])
    func unknownOrForgedCookiesGetAFreshSession(value: String) throws {
        let fixture = try Self.start()
        let client = fixture.live.client()
        client.cookies["appshell_session"] = value
        let response = try client.get("/visits")
        #expect(response.text == "0")
        let issued = try #require(client.cookies["appshell_session"])
        #expect(issued != value)
        #expect(response.headers["Set-Cookie"] != nil)
    }

    @Test func loginRotatesTheIDAndTheOldOneStopsWorking() throws {
        let fixture = try Self.start()
        let client = fixture.live.client()
        _ = try client.send("POST", "/visit")
        let before = try #require(client.cookies["appshell_session"])
        let login = try client.send("POST", "/login")
        let after = try #require(client.cookies["appshell_session"])
        #expect(login.headers["Set-Cookie"] != nil)
        #expect(after != before)
        #expect(try client.get("/visits").text == "1")
        let attacker = fixture.live.client()
        attacker.cookies["appshell_session"] = before
        // Moments after the rotation the old id gets no session and no cookie (one would
        // overwrite the new id in a browser whose requests were still on their way).
        let retired = try attacker.get("/visits")
        #expect(retired.text == "0")
        #expect(retired.headers["Set-Cookie"] == nil)
        #expect(attacker.cookies["appshell_session"] == before)
    }

    /// Two cookies with the session's name (one tossed in by a sibling subdomain or another port),
    /// in one field or two: neither is taken, the answer says to clear the site's cookies (JSON or
    /// HTML as the request prefers) and asks the browser to, and nothing is changed or issued.
    @Test(arguments: [("application/json", false), ("text/html", false), ("text/html", true)])
    func twoSessionCookiesAreRefused(accept: String, twoFields: Bool) throws {
        let fixture = try Self.start()
        let victim = fixture.live.client()
        _ = try victim.send("POST", "/visit")
        let own = try #require(victim.cookies["appshell_session"])
        let tossed = fixture.live.client()
        _ = try tossed.send("POST", "/visit")
        let attacker = try #require(tossed.cookies["appshell_session"])
        let cookies =
            twoFields
            ? [("Cookie", "appshell_session=\(attacker)"), ("Cookie", "appshell_session=\(own)")]
            : [("Cookie", "theme=dark; appshell_session=\(attacker); appshell_session=\(own)")]
        let response = try fixture.live.client().send("POST", "/visit", headers: [("Accept", accept)] + cookies)
        #expect(response.status == 400)
        #expect(response.text.contains("more than one appshell_session cookie"), "\(response.text)")
        #expect(response.text.contains("clear this site"))
        #expect(response.text.hasPrefix("<!doctype html>") == (accept == "text/html"))
        #expect(response.headers["Clear-Site-Data"] == "\"cookies\"")
        #expect(response.headers["Set-Cookie"] == nil)
        #expect(try victim.get("/visits").text == "1")
        #expect(try tossed.get("/visits").text == "1")
    }

    @Test func aFloodOfCookielessRequestsWritesNothingAndStaysUnderTheCap() throws {
        let fixture = try Self.start(maxSessions: 200)
        for _ in 0..<1000 {
            let response = try fixture.live.client().get("/visits")
            #expect(response.status == 200)
        }
        #expect(fixture.backend.count() == 0)
        #expect(fixture.registry.count <= 200)
        #expect(fixture.registry.createdCount.load(ordering: .relaxed) == 1000)
    }
}
