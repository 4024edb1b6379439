import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Testing

/// Routing, request decoding and error responses against a live server.
@Suite struct RouterTests {
    struct Boom: Error {}

    static func makeRouter() -> Router {
        var router = Router()
        router.get("/hello") { _ in .text("hello") }
        router.post("/hello") { _ in .text("posted") }
        router.get("/items/:id") { request in .text("item \(request.parameters["id"] ?? "?")") }
        router.get("/echo") { request in
            .json([
                "path": .string(request.path),
                "segments": .array(request.pathSegments.map { .string($0) }),
                "query": .object(Dictionary(request.queryItems.map { ($0.name, JSON.string($0.value)) }) { a, _ in a }),
                "agent": .string(request.headers["x-test-AGENT"] ?? ""),
                "cookies": .object(request.cookies.mapValues { .string($0) }),
                "remote": .string(request.remoteAddress),
            ])
        }
        router.post("/json") { request in .json(["got": try request.decodeJSON()]) }
        router.post("/form") { request in .json(.object(try request.decodeForm().mapValues { .string($0) })) }
        router.get("/boom") { _ in throw Boom() }
        router.get("/teapot") { _ in throw HTTPError(HTTPStatus(rawValue: 418), "short and stout") }
        return router
    }

    @Test func routesByMethodAndPath() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let client = live.client()
        let get = try client.get("/hello")
        #expect(get.status == 200)
        #expect(get.text == "hello")
        #expect(try client.send("POST", "/hello").text == "posted")
        #expect(try client.get("/items/42").text == "item 42")
    }

    @Test func manyDistinctTargetsDecodeRightWhileTheRecentOnesAreRemembered() throws {
        // More targets than are remembered at once, each asked for twice, some with escapes.
        let live = try LiveServer(responder: Self.makeRouter())
        let client = live.client()
        for round in 0..<2 {
            for n in 0..<150 {
                let id = n % 3 == 0 ? "caf%C3%A9\(n)" : String(n)
                let expected = n % 3 == 0 ? "item café\(n)" : "item \(n)"
                #expect(try client.get("/items/\(id)").text == expected, "round \(round)")
            }
        }
    }

    @Test func unknownPathIs404WithJSONMessage() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let response = try live.client().get("/nowhere")
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
        #expect(response.json["error"]?.stringValue == "no resource at /nowhere")
    }

    @Test func browsersGetHTMLErrors() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let response = try live.client().get("/nowhere", headers: [("Accept", "text/html,*/*")])
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"]?.hasPrefix("text/html") == true)
        #expect(response.text.contains("no resource at /nowhere"))
    }

    @Test func wrongMethodIs405WithAllow() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let response = try live.client().send("DELETE", "/hello")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, POST, HEAD")
        let items = try live.client().send("PUT", "/items/1")
        #expect(items.status == 405)
        #expect(items.headers["Allow"] == "GET, HEAD")
    }

    @Test func headIsAnsweredByGetWithoutBody() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let client = live.client()
        let response = try client.send("HEAD", "/hello")
        #expect(response.status == 200)
        #expect(response.headers["Content-Length"] == "5")
        #expect(response.body.isEmpty)
        // The connection is still usable: HEAD sent no body to confuse the next response.
        #expect(try client.get("/hello").text == "hello")
    }

    @Test func decodesPathQueryHeadersAndCookies() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let response = try live.client().get(
            "/echo?name=J%C3%BCrgen+X&empty=&flag&name=second",
            headers: [("X-Test-Agent", "probe"), ("Cookie", "a=1; b=\"two\";c=3"), ("Cookie", "a=ignored; d=4")])
        let json = response.json
        #expect(json["path"]?.stringValue == "/echo")
        #expect(json["query"]?["name"]?.stringValue == "Jürgen X")
        #expect(json["query"]?["empty"]?.stringValue == "")
        #expect(json["query"]?["flag"]?.stringValue == "")
        #expect(json["agent"]?.stringValue == "probe")
        #expect(json["cookies"] == ["a": "1", "b": "two", "c": "3", "d": "4"])
        #expect(json["remote"]?.stringValue == "127.0.0.1")
    }

    @Test func encodedSlashStaysInsideItsSegment() throws {
        var router = Router()
        router.get("/files/:name") { request in .text(request.parameters["name"] ?? "") }
        let live = try LiveServer(responder: router)
        #expect(try live.client().get("/files/a%2Fb").text == "a/b")
        #expect(try live.client().get("/files/a/b").status == 404)
    }

    @Test func malformedPercentEscapesAre400() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        #expect(try live.client().get("/echo%zz").status == 400)
        #expect(try live.client().get("/echo?x=%FF").status == 400)
        #expect(try live.client().get("/echo%00").status == 400)
    }

    @Test func decodesJSONBodies() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let client = live.client()
        let ok = try client.postJSON("/json", #"{"a": [1, "b"]}"#)
        #expect(ok.status == 200)
        #expect(ok.json["got"] == ["a": [1, "b"]])
        let bad = try client.postJSON("/json", #"{"a": }"#)
        #expect(bad.status == 400)
        #expect(
            bad.json["error"]?.stringValue == "the body is not valid JSON: unexpected character '}' at line 1, column 7"
        )
        let wrongType = try client.send(
            "POST", "/json", headers: [("Content-Type", "text/plain")], body: Array("{}".utf8))
        #expect(wrongType.status == 415)
    }

    @Test func decodesFormBodies() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let response = try live.client().postForm("/form", "user=demo+user&pass=a%26b%3Dc&pass=second")
        #expect(response.status == 200)
        #expect(response.json == ["user": "demo user", "pass": "a&b=c"])
        let bad = try live.client().postForm("/form", "user=%E2%28")
        #expect(bad.status == 400)
    }

    @Test func thrownErrorsBecomeTheirStatus() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let boom = try live.client().get("/boom")
        #expect(boom.status == 500)
        #expect(boom.json["error"]?.stringValue == "internal server error")
        let teapot = try live.client().get("/teapot")
        #expect(teapot.status == 418)
        #expect(teapot.json["error"]?.stringValue == "short and stout")
    }

    @Test func keepsConnectionsAlive() throws {
        let live = try LiveServer(responder: Self.makeRouter())
        let client = live.client()
        for _ in 0..<5 {
            let response = try client.get("/hello")
            #expect(response.status == 200)
            #expect(response.headers["Connection"]?.lowercased() != "close")
        }
    }
}
