import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Responses made once and sent many times, as they are and changed by a handler.
@Suite struct PreparedResponseTests {
    static let body = Array(("{\"state\":\"" + String(repeating: "x", count: 2_000) + "\"}").utf8)

    static func makeRouter(_ prepared: PreparedResponse) -> Router {
        var router = Router()
        router.get("/shared") { _ in .prepared(prepared) }
        router.get("/cookie") { request in
            var response = Response.prepared(prepared)
            response.headers.add(name: "Set-Cookie", value: "n=\(request.query("n") ?? "")")
            return response
        }
        router.get("/status") { _ in
            var response = Response.prepared(prepared)
            response.status = HTTPStatus(rawValue: 202)
            return response
        }
        router.get("/body") { _ in
            var response = Response.prepared(prepared)
            response.body = .bytes(Array("other".utf8))
            return response
        }
        return router
    }

    @Test func theSameResponseIsSentAgainAndAgainWithItsHeadersAndBody() throws {
        let prepared = PreparedResponse(.json(bytes: Self.body))
        let live = try LiveServer(responder: Self.makeRouter(prepared))
        let client = live.client()
        for _ in 0..<50 {
            let response = try client.get("/shared")
            #expect(response.status == 200)
            #expect(response.body == Self.body)
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(response.headers["Content-Length"] == String(Self.body.count))
        }
        let head = try client.send("HEAD", "/shared")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["Content-Length"] == String(Self.body.count))
    }

    @Test func aChangedResponseKeepsWhatItDidNotChange() throws {
        let prepared = PreparedResponse(.json(bytes: Self.body))
        let live = try LiveServer(responder: Self.makeRouter(prepared))
        let client = live.client()
        for n in 0..<20 {
            let response = try client.get("/cookie?n=\(n)")
            #expect(response.body == Self.body)
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(response.headers["Set-Cookie"] == "n=\(n)")
            // The shared one did not take the header.
            #expect(try client.get("/shared").headers["Set-Cookie"] == nil)
        }
        let status = try client.get("/status")
        #expect(status.status == 202)
        #expect(status.body == Self.body)
        let other = try client.get("/body")
        #expect(other.status == 200)
        #expect(other.text == "other")
        #expect(other.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test func manyConnectionsShareOneResponseAtOnce() throws {
        let prepared = PreparedResponse(.json(bytes: Self.body))
        let live = try LiveServer(responder: Self.makeRouter(prepared))
        let good = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<16 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let client = live.client()
                for _ in 0..<50 where (try? client.get("/shared"))?.body == Self.body {
                    good.withLock { $0 += 1 }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(good.withLock { $0 } == 16 * 50)
    }
}
