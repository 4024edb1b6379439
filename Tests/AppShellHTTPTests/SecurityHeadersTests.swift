import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Every answer carries `X-Content-Type-Options: nosniff`, and every HTML answer the policy, framing
/// and referrer fields an app's pages carry, unless it sets its own — error pages and JSON answers
/// included, prepared responses sent again on one connection too, over a socket and in process.
@Suite struct SecurityHeadersTests {
    static let prepared = PreparedResponse(.json(["state": .string("same")]))

    static func start(_ mode: TestMode) throws -> TestServer {
        var router = Router()
        router.get("/json") { _ in .json(["ok": .bool(true)]) }
        router.get("/text") { _ in .text("plain") }
        router.get("/html") { _ in .html("<p>an app's own page</p>") }
        router.get("/own") { _ in
            var response = Response.html("<p>own policy</p>")
            response.headers.add(name: "Content-Security-Policy", value: "default-src 'none'")
            response.headers.add(name: "X-Frame-Options", value: "SAMEORIGIN")
            return response
        }
        router.get("/fails") { _ in throw HTTPError.badRequest("no <b>such</b> thing") }
        router.get("/prepared") { _ in .prepared(Self.prepared) }
        return try TestServer(mode, configuration: LiveServer.testConfiguration, responder: router)
    }

    static let policy = SecurityHeaders.contentSecurityPolicy

    @Test(arguments: TestMode.allCases)
    func jsonTextAndErrorAnswersAreNotSniffed(mode: TestMode) throws {
        let server = try Self.start(mode)
        let client = server.client()
        for (path, accept) in [("/json", "*/*"), ("/text", "*/*"), ("/fails", "application/json"), ("/none", "*/*")] {
            let response = try client.get(path, headers: [("Accept", accept)])
            #expect(response.headers["X-Content-Type-Options"] == "nosniff", "\(mode) \(path)")
            #expect(response.headers["Content-Security-Policy"] == nil, "\(mode) \(path)")
        }
    }

    @Test(arguments: TestMode.allCases)
    func htmlAnswersAndErrorPagesGetThePagesFields(mode: TestMode) throws {
        let server = try Self.start(mode)
        let client = server.client()
        for path in ["/html", "/fails", "/none"] {
            let response = try client.get(path, headers: [("Accept", "text/html")])
            #expect(response.text.hasPrefix("<"), "\(mode) \(path): \(response.text)")
            #expect(response.headers["Content-Security-Policy"] == Self.policy, "\(mode) \(path)")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff", "\(mode) \(path)")
            #expect(response.headers["X-Frame-Options"] == "DENY", "\(mode) \(path)")
            #expect(response.headers["Referrer-Policy"] == "same-origin", "\(mode) \(path)")
        }
        // An answer's own fields are kept, not doubled.
        let own = try client.get("/own")
        #expect(own.headers.values(for: "Content-Security-Policy") == ["default-src 'none'"])
        #expect(own.headers.values(for: "X-Frame-Options") == ["SAMEORIGIN"])
        #expect(own.headers["X-Content-Type-Options"] == "nosniff")
    }

    /// A prepared response carries the field from when it was made, also when a connection sends it
    /// again (its libmicrohttpd response reused).
    @Test func aPreparedResponseSentAgainKeepsIt() throws {
        let server = try Self.start(.live)
        let client = server.client()
        for round in 0..<3 {
            let response = try client.get("/prepared")
            #expect(response.headers.values(for: "X-Content-Type-Options") == ["nosniff"], "round \(round)")
        }
    }

    /// The server's own refusals (a malformed head) carry it too.
    @Test func aRefusedHeadIsNotSniffedEither() throws {
        let server = try Self.start(.live)
        let request = "GET /json HTTP/1.1\r\nHost: localhost\r\nX Y: z\r\n\r\n"
        let raw = try TestClient(port: server.server.port).raw(Array(request.utf8))
        #expect(raw.hasPrefix("HTTP/1.1 400"))
        #expect(ConformanceTests.field("X-Content-Type-Options", in: ConformanceTests.split(raw).head) == "nosniff")
    }
}
