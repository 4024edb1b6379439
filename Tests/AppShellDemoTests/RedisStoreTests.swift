import AppShellJSON
import AppShellSessions
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

/// The real `appshell` process with `store: "redis"` against a real `redis-server` that is killed
/// and started again: while Redis is away a request is refused with a clear 503 and changes
/// nothing; once it is back the same process works again without a restart (its first request
/// too: a connection Redis closed is made again before use); every answered write survives both
/// Redis's restart (append-only file, synced at every write) and the app's.
@Suite(.serialized) struct RedisStoreTests {
    @Test func aRedisRestartIsA503MeanwhileAndLosesNothingAnswered() throws {
        let redis = try RedisTestServer(tcp: true, persistent: true)
        defer { redis.remove() }
        let environment = [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_STORE": "redis", "APPSHELL_STORE_URL": redis.url.description,
        ]
        var running = try CommandTests.run(environment: environment)
        defer { running.terminate() }
        var http = TestClient(port: try running.port())
        // The splash routes to the login screen, then the demo user logs in and opens the list.
        _ = try http.get("/api/state")
        var state = try http.get("/api/state").json
        for _ in 0..<50 where state["screen"]?.stringValue == "splash" {
            usleep(20_000)
            state = try http.get("/api/state").json
        }
        #expect(state["screen"]?.stringValue == "login")
        let login = try http.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(login.status == 200)
        let list = try http.postJSON("/api/actions", #"{"action": "showList"}"#)
        #expect(list.status == 200)
        let answered = list.json
        let version = try #require(answered["version"]?.integerValue)

        // Redis dies: a change is refused, saying so, and nothing changed.
        redis.kill()
        let refused = try http.postJSON("/api/actions", #"{"action": "pop"}"#)
        #expect(refused.status == 503)
        #expect(refused.json["error"]?.stringValue == "the session store is unavailable; nothing was changed")
        // A read too: whether another instance changed the session cannot be known without Redis.
        let meanwhile = try http.get("/api/state")
        #expect(meanwhile.status == 503)
        #expect(meanwhile.json["error"]?.stringValue == "the session store is unavailable; nothing was changed")

        // Redis is back (same port and files): the same process writes again.
        try redis.start()
        let popped = try http.postJSON("/api/actions", #"{"action": "pop"}"#)
        #expect(popped.status == 200)
        let poppedVersion = try #require(popped.json["version"]?.integerValue)
        #expect(poppedVersion > version)

        // Both restarted: the session comes back from Redis's file as last answered.
        let cookies = http.cookies
        running.terminate()
        #expect(running.waitForExit() == 0)
        redis.kill()
        try redis.start()
        running = try CommandTests.run(environment: environment)
        http = TestClient(port: try running.port())
        http.cookies = cookies
        let restored = try http.get("/api/state")
        #expect(restored.status == 200)
        #expect(restored.headers["Set-Cookie"] == nil, "the session was lost: a new one was made")
        #expect(restored.json["version"]?.integerValue == poppedVersion)
        #expect(restored.json["defaults"] == popped.json["defaults"])
        #expect(restored.json["stack"] == popped.json["stack"])
        #expect(restored.json["defaults"]?["isLogin"] == .bool(true))
    }

    /// Issue 31 (4): with the Redis store every cookieless request stored its new session (so that
    /// another instance found its splash under way), and a flood of them filled Redis. Now they
    /// store nothing, and a session's next request at the other instance still finds its splash as
    /// it began at the first: the start time travels in the cookie's seal.
    @Test func cookielessRequestsStoreNothingAndTheSplashCarriesOverToTheOtherInstance() throws {
        let redis = try RedisTestServer(tcp: true, persistent: false)
        defer { redis.remove() }
        let environment = [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "1500",
            "APPSHELL_STORE": "redis", "APPSHELL_STORE_URL": redis.url.description,
        ]
        let first = try CommandTests.run(environment: environment)
        defer { first.terminate() }
        let second = try CommandTests.run(environment: environment)
        defer { second.terminate() }
        let flood = TestClient(port: try first.port())
        for path in Array(repeating: "/api/state", count: 300) + ["/", "/api/events"] {
            flood.cookies = [:]
            let answer = try flood.get(path)
            #expect(answer.status == 200, "\(path)")
            #expect(answer.headers["Set-Cookie"] != nil)
        }
        let store = try RedisDefaultsBackend(url: redis.url)
        defer { store.close() }
        #expect(try store.count() == 0, "cookieless requests stored their sessions")

        // One browser: its first request at the first instance, the next ones at the second.
        let atFirst = TestClient(port: try first.port())
        let began = Date()
        #expect(try atFirst.get("/api/state").json["screen"]?.stringValue == "splash")
        let atSecond = TestClient(port: try second.port())
        atSecond.cookies = atFirst.cookies
        usleep(900_000)
        let during = try atSecond.get("/api/state")
        #expect(during.headers["Set-Cookie"] == nil, "the second instance made a new session")
        #expect(during.json["screen"]?.stringValue == "splash")
        // Past 1.5 s after the first request, less than 1.5 s after the second's: the splash
        // ran from the first request.
        usleep(UInt32(max(0, 1_700_000 - Int(Date().timeIntervalSince(began) * 1_000_000))))
        let after = try atSecond.get("/api/state")
        #expect(Date().timeIntervalSince(began) < 2.3, "the box was too slow to tell")
        #expect(after.json["screen"]?.stringValue == "login")
        let login = try atSecond.postJSON(
            "/api/actions", #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(login.status == 200)
        atFirst.cookies = atSecond.cookies
        #expect(try atFirst.get("/api/state").json["defaults"]?["isLogin"] == .bool(true))
    }

    @Test func anUnreachableRedisStopsTheStartSayingWhy() throws {
        // A port nothing listens on: the server says which store it could not reach, and exits.
        let redis = try RedisTestServer(tcp: true, persistent: false)
        let url = redis.url.description
        redis.remove()
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_STORE": "redis", "APPSHELL_STORE_URL": url,
        ])
        #expect(running.waitForExit() != 0)
        let errors = running.errorText
        #expect(errors.contains(url) && errors.contains("connect"), "standard error: \(errors)")
    }
}
