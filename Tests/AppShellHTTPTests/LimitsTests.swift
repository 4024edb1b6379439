import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Body, header and connection limits, and malformed requests.
@Suite struct LimitsTests {
    static func echoServer(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> LiveServer {
        var configuration = LiveServer.testConfiguration
        configuration.maxBodyBytes = 1024
        configure(&configuration)
        var router = Router()
        router.post("/upload") { request in .text("received \(request.body.count)") }
        router.get("/ok") { _ in .text("ok") }
        return try LiveServer(configuration: configuration, responder: router)
    }

    @Test func bodyAtTheLimitIsAccepted() throws {
        let live = try Self.echoServer()
        let response = try live.client().send("POST", "/upload", body: [UInt8](repeating: 65, count: 1024))
        #expect(response.status == 200)
        #expect(response.text == "received 1024")
    }

    @Test func declaredOversizedBodyIs413() throws {
        let live = try Self.echoServer()
        let response = try live.client().send("POST", "/upload", body: [UInt8](repeating: 65, count: 1025))
        #expect(response.status == 413)
        #expect(response.json["error"]?.stringValue == "the request body is larger than 1024 bytes")
        #expect(try live.client().get("/ok").text == "ok")
    }

    @Test func oversizedBodyIsRefusedBeforeItIsSent() throws {
        let live = try Self.echoServer()
        // Only the headers are sent: the server must answer without waiting for 10 MB.
        let response = try live.client().raw(
            Array("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000\r\n\r\n".utf8))
        #expect(response.hasPrefix("HTTP/1.1 413"))
    }

    @Test func chunkedOversizedBodyIs413() throws {
        let live = try Self.echoServer()
        var request =
            "POST /upload HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        for _ in 0..<4 { request += "200\r\n" + String(repeating: "B", count: 512) + "\r\n" }
        request += "0\r\n\r\n"
        let response = try live.client().raw(Array(request.utf8))
        #expect(response.hasPrefix("HTTP/1.1 413"))
        var small =
            "POST /upload HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        small += "10\r\n" + String(repeating: "C", count: 16) + "\r\n0\r\n\r\n"
        #expect(try live.client().raw(Array(small.utf8)).hasSuffix("received 16"))
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET /\r\n\r\n", 400),
        ("GET / HTTP/1.1 extra\r\nHost: localhost\r\n\r\n", 400),
        ("G@T /ok HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
        ("GET ok HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
        ("GET / HTTP/9.9\r\nHost: localhost\r\n\r\n", 505),
    ])
    func malformedRequestsAre400AndTheServerKeepsServing(raw: String, expected: Int) throws {
        let live = try Self.echoServer()
        let response = try live.client().raw(Array(raw.utf8))
        #expect(response.hasPrefix("HTTP/1.1 \(expected) "), "answered: \(response.prefix(60))")
        #expect(try live.client().get("/ok").status == 200)
    }

    /// libmicrohttpd closes the connection without an answer when the request line is not even
    /// `METHOD SP TARGET` (documented in the Security article); the server must still serve others.
    @Test(arguments: ["GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET /a b HTTP/1.1\r\nHost: localhost\r\n\r\n"])
    func unparsableRequestLinesAreClosed(raw: String) throws {
        let live = try Self.echoServer()
        #expect(try live.client().raw(Array(raw.utf8)) == "")
        #expect(try live.client().get("/ok").status == 200)
    }

    @Test func tooLargeHeaderIs431() throws {
        let live = try Self.echoServer { $0.connectionMemoryBytes = 8192 }
        let big = String(repeating: "v", count: 16_000)
        let response = try live.client().raw(Array("GET /ok HTTP/1.1\r\nHost: localhost\r\nX-Big: \(big)\r\n\r\n".utf8))
        let status = Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(status == 431 || status == 400, "answered: \(response.prefix(60))")
        #expect(try live.client().get("/ok").status == 200)
    }

    /// The default connection memory (16 KiB) holds a `Cookie` field of 7 000 bytes (nginx and
    /// Apache allow 8 KiB per field), and another field of 15 000; beyond that the answer is 431
    /// and the server goes on.
    @Test func defaultConnectionMemoryHoldsLargeHeaders() throws {
        let live = try Self.echoServer { $0.connectionMemoryBytes = HTTPServerConfiguration().connectionMemoryBytes }
        func status(_ name: String, _ bytes: Int) throws -> Int {
            let value = String(repeating: "v", count: bytes)
            let response = try live.client().raw(
                Array("GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\(name): a=\(value)\r\n\r\n".utf8))
            return Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        #expect(try status("Cookie", 7_000) == 200)
        #expect(try status("X-Big", 15_000) == 200)
        #expect(try status("Cookie", 9_000) == 431)
        #expect(try [400, 431].contains(status("X-Big", 17_000)))
        #expect(try live.client().get("/ok").status == 200)
    }

    /// The cap holds across the server's event loops (each has a daemon of its own, all accepting
    /// from one socket): with more loops than the cap, connections from one address still stop at it.
    @Test(arguments: [1, 4])
    func connectionsPerIPAreCapped(threads: Int) throws {
        let live = try Self.echoServer {
            $0.maxConnectionsPerIP = 2
            $0.threads = threads
        }
        let first = live.client()
        let second = live.client()
        #expect(try first.get("/ok").status == 200)
        #expect(try second.get("/ok").status == 200)
        // Both stay open (keep-alive); a third from the same IP is closed without an answer.
        let third = live.client()
        #expect(throws: (any Error).self) { try third.get("/ok") }
        second.close()
        // Once one closes, a new one is admitted (the server notices the close asynchronously).
        var admitted = false
        for _ in 0..<50 where !admitted {
            admitted = (try? live.client().get("/ok").status) == 200
            if !admitted { usleep(20_000) }
        }
        #expect(admitted)
        #expect(try first.get("/ok").status == 200)
    }

    @Test func totalConnectionsAreCappedAndTheNextWaits() throws {
        let live = try Self.echoServer { $0.maxConnections = 2 }
        let first = live.client()
        let second = live.client()
        #expect(try first.get("/ok").status == 200)
        #expect(try second.get("/ok").status == 200)
        // At the limit the server stops accepting: a third connection waits in the backlog…
        let answered = DispatchSemaphore(value: 0)
        let port = live.port
        let third = Locked<Int>(0)
        Thread.detachNewThread {
            third.withLock { $0 = (try? TestClient(port: port).get("/ok").status) ?? -1 }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 0.5) == .timedOut)
        // …and is served as soon as a slot frees.
        second.close()
        #expect(answered.wait(timeout: .now() + 5) == .success)
        #expect(third.withLock { $0 } == 200)
    }

    @Test func idleConnectionsAreClosed() throws {
        let live = try Self.echoServer { $0.idleTimeoutSeconds = 1 }
        let response = try live.client().raw(Array("GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        // raw() reads until the server closes: it returns only because the idle timeout fired.
        #expect(response.hasSuffix("ok"))
    }

    // MARK: bodies for routes that take none

    /// A body sent to a route that reads none is not collected: the route gets the request
    /// without it, and the connection goes on with the next request.
    @Test func aBodyForARouteThatReadsNoneIsNotCollected() throws {
        var router = Router()
        router.get("/ok") { request in .text("body \(request.body.count)") }
        router.add(.post, "/ping", acceptsBody: false) { request in .text("body \(request.body.count)") }
        router.post("/upload") { request in .text("body \(request.body.count)") }
        let live = try LiveServer(responder: router)
        let client = live.client()
        let body = [UInt8](repeating: 65, count: 1000)
        #expect(try client.send("GET", "/ok", body: body).text == "body 0")
        #expect(try client.send("POST", "/ping", body: body).text == "body 0")
        #expect(try client.send("POST", "/upload", body: body).text == "body 1000")
        // The same keep-alive connection, after two discarded bodies.
        #expect(try client.get("/ok").text == "body 0")
    }

    /// A client that waits for `100 Continue` before sending a body that no route would read gets
    /// the final answer at once instead, and never has to send the body.
    @Test(arguments: [("POST", "/ok", 405), ("POST", "/nothing", 404), ("GET", "/ok", 200), ("POST", "/upload", 100)])
    func aBodyNoRouteReadsIsAnsweredBeforeItIsSent(method: String, path: String, expected: Int) throws {
        let live = try Self.echoServer()
        let connection = try RawConnection(port: live.port)
        try connection.send(
            "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n")
        let head = try connection.read(through: "\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 \(expected) "), "answered: \(head.prefix(60))")
    }

    /// A body larger than the limit is 413 only where a route would read it: otherwise the answer
    /// is the one the request gets without its body (405 with `Allow`, 404), sent or chunked.
    @Test(arguments: [
        ("POST", "/ok", 405), ("PUT", "/upload", 405), ("POST", "/nothing", 404), ("GET", "/ok", 200),
        ("POST", "/upload", 413),
    ])
    func anOversizedBodyIs413OnlyWhereItWouldBeRead(method: String, path: String, expected: Int) throws {
        let live = try Self.echoServer()
        let body = String(repeating: "B", count: 4096)
        let declared = try live.client().raw(
            Array(
                "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n\(body)"
                    .utf8
            ))
        #expect(declared.hasPrefix("HTTP/1.1 \(expected) "), "answered: \(declared.prefix(60))")
        if expected == 405 { #expect(declared.contains("Allow: ")) }
        var chunked =
            "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        for _ in 0..<8 { chunked += "200\r\n" + String(repeating: "C", count: 512) + "\r\n" }
        chunked += "0\r\n\r\n"
        let sent = try live.client().raw(Array(chunked.utf8))
        #expect(sent.hasPrefix("HTTP/1.1 \(expected) "), "answered: \(sent.prefix(60))")
    }
}
