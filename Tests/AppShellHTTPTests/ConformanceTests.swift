import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// What RFC 9110 and RFC 9112 ask of a server at the edges: request-target forms, message
/// framing, `HEAD` and `304` header fields, and methods the server does not implement.
@Suite struct ConformanceTests {
    /// A public directory with one small file (kept in memory once served) and one large file
    /// (sent from disk each time).
    final class Files {
        let root: String
        static let small = "body{color:red}"
        static let largeSize = StaticFiles.cachedFileLimit + 1000

        init() throws {
            root = NSTemporaryDirectory() + "appshell-conformance-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: root + "/css", withIntermediateDirectories: true)
            try Self.small.write(toFile: root + "/css/app.css", atomically: true, encoding: .utf8)
            try Data(repeating: 0x61, count: Self.largeSize).write(to: URL(fileURLWithPath: root + "/large.txt"))
            try "secret".write(toFile: root + "/.env", atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    static func serve(_ files: Files) throws -> LiveServer {
        var router = Router(fallback: try StaticFiles(directory: files.root))
        router.get("/ok") { request in .text("ok \(request.path) \(request.query("q") ?? "-")") }
        router.get("/host") { request in .text(request.host ?? "none") }
        router.post("/echo") { request in .text("received \(request.body.count)") }
        // The names the absolute-form targets below carry are served (the Host field is ignored).
        var configuration = LiveServer.testConfiguration
        configuration.allowedHosts = try AllowedHosts(["example.com", "app.example", "x"])
        return try LiveServer(configuration: configuration, responder: router)
    }

    /// The status code and header block of a raw answer, and what followed the header block.
    static func split(_ raw: String) -> (status: Int, head: String, body: String) {
        let parts = raw.components(separatedBy: "\r\n\r\n")
        let status = Int(raw.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// The value of the header field `name` in a raw header block (`nil` when absent).
    static func field(_ name: String, in head: String) -> String? {
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    // MARK: 304 (RFC 9110 §8.6, §15.4.5)

    /// A 304 carries no `Content-Length`, or the one the 200 would carry, never `0`: for a file
    /// not yet in memory, one in memory, and one sent from disk.
    @Test(arguments: ["/css/app.css", "/large.txt"])
    func notModifiedCarriesTheRepresentationsLength(path: String) throws {
        let files = try Files()
        let live = try Self.serve(files)
        let length = path == "/large.txt" ? Files.largeSize : Files.small.utf8.count
        let head = try live.client().send("HEAD", path)
        let etag = try #require(head.headers["ETag"])
        // Twice: before the file is kept in memory (a HEAD reads no file), and after a GET kept it.
        for round in 0..<2 {
            if round == 1 { #expect(try live.client().get(path).body.count == length) }
            let raw = try live.client().raw(
                Array(
                    "GET \(path) HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: \(etag)\r\nConnection: close\r\n\r\n"
                        .utf8))
            let answer = Self.split(raw)
            #expect(answer.status == 304)
            let declared = Self.field("Content-Length", in: answer.head)
            #expect(declared == nil || declared == String(length), "a 304 said Content-Length: \(declared ?? "")")
            #expect(answer.body.isEmpty)
            #expect(Self.field("ETag", in: answer.head) == etag)
        }
    }

    /// A 304 a handler makes without stating a length carries no `Content-Length` (the connection
    /// then closes); one that states it carries it.
    @Test func aHandlersNotModifiedCarriesNoLengthOrTheStatedOne() throws {
        var router = Router()
        router.get("/bare") { _ in Response(status: .notModified, headers: ["ETag": "\"a\""]) }
        router.get("/stated") { _ in .notModified(headers: ["ETag": "\"a\""], length: 1234) }
        router.get("/ok") { _ in .text("ok") }
        let live = try LiveServer(responder: router)
        let bare = Self.split(try live.client().raw(Array("GET /bare HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)))
        #expect(bare.status == 304)
        #expect(Self.field("Content-Length", in: bare.head) == nil)
        #expect(Self.field("Transfer-Encoding", in: bare.head) == nil)
        #expect(Self.field("ETag", in: bare.head) == "\"a\"")
        #expect(bare.body.isEmpty)
        let client = live.client()
        let stated = try client.get("/stated")
        #expect(stated.status == 304)
        #expect(stated.headers["Content-Length"] == "1234")
        // The connection goes on after it.
        #expect(try client.get("/ok").text == "ok")
    }

    // MARK: HEAD (RFC 9110 §9.3.2)

    /// `HEAD` gets the header fields `GET` would, `Content-Length` included, and no body: for a
    /// route, a file in memory and a file sent from disk.
    @Test(arguments: ["/ok", "/css/app.css", "/large.txt"])
    func headCarriesTheGetsLengthAndNoBody(path: String) throws {
        let files = try Files()
        let live = try Self.serve(files)
        for _ in 0..<2 {
            let get = try live.client().get(path)
            #expect(get.status == 200)
            let raw = try live.client().raw(
                Array("HEAD \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
            let answer = Self.split(raw)
            #expect(answer.status == 200)
            #expect(Self.field("Content-Length", in: answer.head) == String(get.body.count))
            #expect(Self.field("Content-Type", in: answer.head) == get.headers["Content-Type"])
            #expect(answer.body.isEmpty)
        }
    }

    // MARK: absolute-form targets (RFC 9112 §3.2.2)

    /// `GET http://host/path` is the request for `/path`, on every route and for static files.
    @Test(arguments: [
        ("GET http://127.0.0.1/ok HTTP/1.1", "ok /ok -"),
        ("GET http://127.0.0.1/ok?q=1 HTTP/1.1", "ok /ok 1"),
        ("GET HTTP://Example.COM:8080/ok?q=a%20b HTTP/1.1", "ok /ok a b"),
        ("GET https://example.com/ok HTTP/1.1", "ok /ok -"),
        ("GET http://127.0.0.1/css/app.css HTTP/1.1", Files.small),
    ])
    func absoluteFormTargetsAreTheirPath(requestLine: String, expected: String) throws {
        let files = try Files()
        let live = try Self.serve(files)
        let raw = try live.client().raw(Array("\(requestLine)\r\nHost: other\r\nConnection: close\r\n\r\n".utf8))
        let answer = Self.split(raw)
        #expect(answer.status == 200, "answered: \(raw.prefix(80))")
        #expect(answer.body == expected)
    }

    /// The host of an absolute-form target is the request's host: the `Host` field is ignored
    /// (RFC 9112 §3.2.2), as `request.host` and the `Host` header field both say.
    @Test func theAuthorityOfAnAbsoluteFormTargetIsTheHost() throws {
        let files = try Files()
        let live = try Self.serve(files)
        let raw = try live.client().raw(
            Array("GET http://app.example:8080/host HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n".utf8))
        #expect(Self.split(raw).body == "app.example:8080")
        #expect(try live.client().get("/host").text == "127.0.0.1:\(live.port)")
        let request = try Request(method: .get, target: "http://a.example/x?y=1", headers: ["Host": "b.example"])
        #expect(request.host == "a.example")
        #expect(request.headers["Host"] == "a.example")
        #expect(request.target == "/x?y=1")
        #expect(request.path == "/x")
        #expect(try Request(method: .get, target: "http://a.example").target == "/")
        #expect(try Request(method: .get, target: "http://a.example?y=1").target == "/?y=1")
    }

    /// An absolute-form target naming a host that is not served is refused whatever its `Host`
    /// field says (the authority is the host), and one naming a served host passes whatever its
    /// `Host` says.
    @Test func anAbsoluteFormTargetIsCheckedByItsAuthority() throws {
        let files = try Files()
        let live = try Self.serve(files)
        let foreign = try live.client().raw(
            Array(
                "GET http://rebound.attacker.example/ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        #expect(Self.split(foreign).status == 421)
        #expect(foreign.contains("rebound.attacker.example"))
        let served = try live.client().raw(
            Array(
                "GET http://localhost/ok HTTP/1.1\r\nHost: rebound.attacker.example\r\nConnection: close\r\n\r\n".utf8))
        #expect(Self.split(served).status == 200)
    }

    /// An absolute-form target still cannot leave the public directory or reach a dot-file, and a
    /// malformed one is 400.
    @Test(arguments: [
        ("GET http://x/../secret HTTP/1.1", 404),
        ("GET http://x/%2e%2e/secret HTTP/1.1", 404),
        ("GET http://x/.env HTTP/1.1", 404),
        ("GET http://x/css/..%2f.env HTTP/1.1", 404),
        ("GET http:///ok HTTP/1.1", 400),
        ("GET http://user@x/ok HTTP/1.1", 400),
        ("GET ftp://x/ok HTTP/1.1", 400),
        ("GET http:/ok HTTP/1.1", 400),
        ("GET x/ok HTTP/1.1", 400),
    ])
    func absoluteFormTargetsKeepThePathRules(requestLine: String, expected: Int) throws {
        let files = try Files()
        let live = try Self.serve(files)
        let raw = try live.client().raw(Array("\(requestLine)\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        #expect(Self.split(raw).status == expected, "answered: \(raw.prefix(80))")
        #expect(!raw.contains("secret\n") && !raw.hasSuffix("secret"))
    }

    // MARK: framing (RFC 9112 §6)

    /// `Transfer-Encoding` with `Content-Length` (a request-smuggling shape), or a transfer coding
    /// other than a final `chunked`, is refused and the connection closed; nothing reaches a route.
    @Test(arguments: [
        ("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400),
        ("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400),
        ("Transfer-Encoding: gzip\r\n", 400),
        ("Transfer-Encoding: chunked, gzip\r\n", 400),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", 400),
        ("Transfer-Encoding: gzip, chunked\r\n", 501),
    ])
    func ambiguousOrUnknownFramingIsRefused(fields: String, expected: Int) throws {
        let files = try Files()
        let live = try Self.serve(files)
        let raw = try live.client().raw(
            Array(
                "POST /echo HTTP/1.1\r\nHost: localhost\r\n\(fields)\r\n5\r\nhello\r\n0\r\n\r\nGET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    .utf8))
        let answer = Self.split(raw)
        #expect(answer.status == expected, "answered: \(raw.prefix(80))")
        #expect(Self.field("Connection", in: answer.head)?.lowercased() == "close")
        #expect(!raw.contains("received"))
        // The pipelined request after it was not read as a second request.
        #expect(!raw.contains("ok /ok"))
        #expect(try live.client().get("/ok").status == 200)
    }

    /// A chunked body alone is fine, `Transfer-Encoding` compared without regard to case.
    @Test func aChunkedBodyIsRead() throws {
        let files = try Files()
        let live = try Self.serve(files)
        let raw = try live.client().raw(
            Array(
                "POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                    .utf8))
        #expect(Self.split(raw).body == "received 5")
    }

    // MARK: methods (RFC 9110 §9, §15.5.6, §15.6.2)

    /// A method the server knows but a resource does not allow is 405 with `Allow`; a method the
    /// server does not implement at all is 501 — for routes and static files alike.
    @Test(arguments: [
        ("OPTIONS", "/ok", 405), ("TRACE", "/ok", 405), ("DELETE", "/ok", 405),
        ("OPTIONS", "/css/app.css", 405), ("TRACE", "/css/app.css", 405), ("PUT", "/css/app.css", 405),
        ("FOO", "/ok", 501), ("FOO", "/css/app.css", 501), ("FOO", "/nothing-here", 501), ("BREW", "/echo", 501),
        ("CONNECT", "example.com:443", 501),
    ])
    func unallowedMethodsAre405AndUnknownOnes501(method: String, path: String, expected: Int) throws {
        let files = try Files()
        let live = try Self.serve(files)
        let response = try live.client().send(method, path)
        #expect(response.status == expected)
        if expected == 405 { #expect(response.headers["Allow"]?.contains("GET") == true) }
        #expect(response.json["error"]?.stringValue?.contains(method) == true)
        #expect(try live.client().get("/ok").status == 200)
    }

    /// A router that routes a method of its own (here `PURGE`) implements it: 405 elsewhere, not 501.
    @Test func aMethodARouteUsesIsImplemented() throws {
        var router = Router()
        router.add(HTTPMethod(rawValue: "PURGE"), "/cache") { _ in .text("purged") }
        router.get("/ok") { _ in .text("ok") }
        let live = try LiveServer(responder: router)
        #expect(try live.client().send("PURGE", "/cache").text == "purged")
        #expect(try live.client().send("PURGE", "/ok").status == 405)
    }
}
