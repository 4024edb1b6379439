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

    /// A prepared response's bytes live as long as libmicrohttpd sends them, not as long as the
    /// cache's reference: a cache entry replaced while a slow client is still being sent the old
    /// one must not free what libmicrohttpd reads (under AddressSanitizer the old code reported a
    /// heap-use-after-free here; without it, the client got a cut-off or wrong body). Each
    /// connection sends its own libmicrohttpd response (it carries its own `X-Request-ID`), which
    /// keeps the prepared one until it is sent and the connection has closed.
    @Test func aReleasedResponseIsStillSentWholeToASlowClient() throws {
        // Far more than the socket buffers hold: the client's receive buffer is fixed at 256 KiB and
        // the server's send buffer grows to at most 4 MiB on Linux by default.
        let body = [UInt8](unsafeUninitializedCapacity: 16 << 20) { bytes, count in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index % 251) }
            count = bytes.count
        }
        let holder = Locked<PreparedResponse?>(
            PreparedResponse(
                Response(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: .bytes(body))))
        var router = Router()
        router.get("/big") { _ in
            guard let prepared = holder.withLock({ $0 }) else { throw HTTPError.notFound("released") }
            return .prepared(prepared)
        }
        let live = try LiveServer(responder: router)
        weak var released: PreparedResponse?
        do {
            let connection = try RawConnection(port: live.port, receiveBufferBytes: 256 * 1024)
            try connection.send("GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let head = try connection.read(through: "\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.contains("Content-Length: \(body.count)\r\n"))
            let start = try connection.readBytes(4096)
            // The only Swift reference goes while libmicrohttpd is still sending the response.
            holder.withLock { prepared in
                released = prepared
                prepared = nil
            }
            let received = try start + connection.readBytes(body.count - start.count)
            #expect(received.count == body.count)
            #expect(received.withUnsafeBytes { got in body.withUnsafeBytes { $0.elementsEqual(got) } })
        }
        // Sent, and the connection closed (its last use above): its answer lets the prepared
        // response go (compared as a Bool: describing the object would describe its 16 MiB).
        let deadline = Date().addingTimeInterval(5)
        while released != nil && Date() < deadline { usleep(1_000) }
        #expect(released == nil ? true : false)
    }
}
