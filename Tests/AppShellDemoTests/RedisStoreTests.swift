import AppShellJSON
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
