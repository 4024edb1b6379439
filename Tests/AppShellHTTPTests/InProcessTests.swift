import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// The two test modes answer alike: the same requests, through `TestServer`, over a socket and in
/// process — routing, allowed hosts, trusted proxies, body limits, HEAD, cookies and deferred answers.
@Suite struct InProcessTests {
    /// A router with a plain, a cookie-setting, a body-reading, a client-address and a deferred
    /// route (answered from another thread after a moment), served in `mode`.
    static func start(_ mode: TestMode, maxBodyBytes: Int = 64) throws -> TestServer {
        var router = Router()
        router.get("/hello/:name") { request in .text("hello \(request.parameters["name"] ?? "")") }
        router.post("/cookie") { _ in
            var response = Response.text("set")
            response.headers.add(name: "Set-Cookie", value: "flavour=oat; Path=/; HttpOnly")
            return response
        }
        router.get("/cookie") { request in .text(request.headers["Cookie"] ?? "none") }
        router.post("/echo") { request in .text(String(decoding: request.body, as: UTF8.self)) }
        router.add(.post, "/ignore", acceptsBody: false) { request in .text("ignored \(request.body.count)") }
        router.get("/client") { request in .text(request.clientAddress) }
        router.get("/empty") { _ in Response(status: .noContent) }
        router.get("/later") { _ in
            let pending = PendingResponse()
            Thread.detachNewThread {
                usleep(50_000)
                guard pending.claim() else { return }
                pending.fulfil(.text("later"))
            }
            return .deferred(pending, headers: ["Set-Cookie": "waited=yes; Path=/"])
        }
        var configuration = LiveServer.testConfiguration
        configuration.maxBodyBytes = maxBodyBytes
        configuration.allowedHosts = try AllowedHosts(["app.example.com"])
        configuration.trustedProxies = try TrustedProxies(["127.0.0.1"])
        return try TestServer(mode, configuration: configuration, responder: router)
    }

    @Test(arguments: TestMode.allCases) func routesCapturesAndTheRequestID(mode: TestMode) throws {
        let server = try Self.start(mode)
        let client = server.client()
        let response = try client.get("/hello/w%C3%B6rld", headers: [("X-Request-ID", "given-1")])
        #expect(response.status == 200)
        #expect(response.text == "hello wörld")
        #expect(response.headers["X-Request-ID"] == "given-1")
        #expect(response.headers["Content-Length"] == "12")
        #expect(try client.get("/nowhere").status == 404)
        let wrongMethod = try client.send("DELETE", "/echo", headers: [], body: [])
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "POST")
        let head = try client.send("HEAD", "/hello/x", headers: [], body: [])
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["Content-Length"] == "7")
        let empty = try client.get("/empty")
        #expect(empty.status == 204)
        #expect(empty.headers["Content-Length"] == nil)
    }

    @Test(arguments: TestMode.allCases) func aHostNotServedIsRefused(mode: TestMode) throws {
        let client = try Self.start(mode).client()
        #expect(try client.get("/hello/a", headers: [("Host", "app.example.com")]).status == 200)
        #expect(try client.get("/hello/a", headers: [("Host", "evil.example.com")]).status == 421)
    }

    @Test(arguments: TestMode.allCases) func cookiesAreKeptAndSentBack(mode: TestMode) throws {
        let client = try Self.start(mode).client()
        #expect(try client.get("/cookie").text == "none")
        _ = try client.postForm("/cookie", "a=b")
        #expect(client.cookies == ["flavour": "oat"])
        #expect(try client.get("/cookie").text == "flavour=oat")
    }

    @Test(arguments: TestMode.allCases) func bodiesAreReadUpToTheLimit(mode: TestMode) throws {
        let client = try Self.start(mode, maxBodyBytes: 8).client()
        #expect(try client.postForm("/echo", "a=b").text == "a=b")
        #expect(try client.postForm("/echo", "a=123456789").status == 413)
        // A route that reads no body gets the request without it, never a 413.
        let ignored = try client.send("POST", "/ignore", headers: [], body: Array(repeating: 65, count: 100))
        #expect(ignored.status == 200)
        #expect(ignored.text == "ignored 0")
    }

    @Test(arguments: TestMode.allCases) func theClientBehindATrustedProxyIsTheForwardedOne(mode: TestMode) throws {
        let client = try Self.start(mode).client()
        #expect(try client.get("/client").text == "127.0.0.1")
        #expect(try client.get("/client", headers: [("X-Forwarded-For", "198.51.100.9")]).text == "198.51.100.9")
    }

    @Test(arguments: TestMode.allCases) func aDeferredAnswerIsAwaitedWithItsHeaders(mode: TestMode) throws {
        let server = try Self.start(mode)
        let client = server.client()
        let response = try client.get("/later")
        #expect(response.status == 200)
        #expect(response.text == "later")
        #expect(client.cookies["waited"] == "yes")
        #expect(server.server.waitingDeferredResponses == 0)
    }

    @Test func anInProcessRequestIsCountedByRoute() throws {
        let server = try Self.start(.inProcess)
        _ = try server.client().get("/hello/a")
        _ = try server.client().get("/nowhere")
        #expect(server.server.statistics.completed == 2)
        #expect(server.server.statistics.inFlight == 0)
    }

    @Test func aDeferredAnswerThatNeverComesThrowsInsteadOfHanging() throws {
        var router = Router()
        router.get("/never") { _ in .deferred(PendingResponse()) }
        let server = HTTPServer(configuration: LiveServer.testConfiguration, responder: router)
        let client = InProcessClient(server: server)
        client.timeoutMilliseconds = 50
        #expect(throws: TestClientError.self) { try client.get("/never") }
        #expect(server.waitingDeferredResponses == 0)
    }
}
