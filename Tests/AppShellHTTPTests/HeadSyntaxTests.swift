import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// A request head that a proxy in front could read differently from this server (request
/// smuggling, RFC 9112 §11.2) is refused with 400 and the connection closed (RFC 9110 §5.1,
/// §5.5; RFC 9112 §3, §5, §6.3): nothing reaches a route, and what follows is not read as a
/// second request.
@Suite struct HeadSyntaxTests {
    static func serve() throws -> LiveServer {
        var configuration = LiveServer.testConfiguration
        // A request the server waits on forever fails the test in seconds, not at the read timeout.
        configuration.idleTimeoutSeconds = 2
        var router = Router()
        router.post("/echo") { request in .text("received \(request.body.count)") }
        router.get("/ok") { _ in .text("ok") }
        return try LiveServer(configuration: configuration, responder: router)
    }

    /// A pipelined request after the refused one: it must not be answered.
    static let next = "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n"

    @Test(arguments: [
        // Two lengths: libmicrohttpd took the first and read the rest as a second request.
        ("Content-Length: 2\r\nContent-Length: 47\r\n", "different values"),
        ("Content-Length: 5\r\nContent-Length: 5x\r\n", "decimal number"),
        ("X Y: z\r\nContent-Length: 5\r\n", "must be a token"),
        // Named "Transfer-Encoding " by libmicrohttpd, so the body was framed by Content-Length.
        ("Transfer-Encoding : chunked\r\nContent-Length: 5\r\n", "must be a token"),
        ("X-A: a\rb\r\nContent-Length: 5\r\n", "control characters"),
        ("X-A: a\u{0}b\r\nContent-Length: 5\r\n", "NUL byte"),
        ("Content-Length: 5\r\nX-A: a\u{0}b\r\n", "NUL byte"),
        ("X-A: a\u{1}b\r\nContent-Length: 5\r\n", "control characters"),
        // Folded lines: in the middle, and last before the empty line.
        ("X-A: a\r\n b\r\nContent-Length: 5\r\n", "obs-fold"),
        ("Content-Length: 5\r\nX-A: a\r\n\tb\r\n", "obs-fold"),
        ("Host: evil.example\r\nContent-Length: 5\r\n", "one Host field"),
        // Read to the connection's end by libmicrohttpd: the client waited for the idle timeout.
        ("Transfer-Encoding: chunked \r\n", "exactly chunked"),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "more than once"),
    ])
    func anAmbiguousHeaderSectionIsRefused(fields: String, message: String) throws {
        let live = try Self.serve()
        let raw = try live.client().raw(
            Array(
                ("POST /echo HTTP/1.1\r\nHost: localhost\r\n\(fields)\r\n"
                    + "5\r\nhello\r\n0\r\n\r\n" + Self.next).utf8))
        let answer = ConformanceTests.split(raw)
        #expect(answer.status == 400, "answered: \(raw.prefix(120))")
        #expect(ConformanceTests.field("Connection", in: answer.head)?.lowercased() == "close")
        #expect(answer.body.contains(message), "answered: \(answer.body)")
        #expect(!raw.contains("received"))
        #expect(raw.components(separatedBy: "HTTP/1.1 ").count == 2, "a second answer: \(raw)")
        #expect(try live.client().get("/ok").status == 200)
    }

    /// A request line with extra spaces (skipped by libmicrohttpd), or a target with a control
    /// byte, a NUL or a raw non-ASCII byte.
    @Test(arguments: [
        "POST  /echo HTTP/1.1", "POST /ec\u{1}ho HTTP/1.1", "POST /echo\u{0}x HTTP/1.1", "POST /\u{E9} HTTP/1.1",
    ])
    func anOddRequestLineIsRefused(line: String) throws {
        let live = try Self.serve()
        let raw = try live.client().raw(
            Array("\(line)\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello\(Self.next)".utf8))
        let answer = ConformanceTests.split(raw)
        #expect(answer.status == 400, "answered: \(raw.prefix(120))")
        #expect(ConformanceTests.field("Connection", in: answer.head)?.lowercased() == "close")
        #expect(answer.body.contains("one space apart"), "answered: \(answer.body)")
        #expect(raw.components(separatedBy: "HTTP/1.1 ").count == 2, "a second answer: \(raw)")
    }

    /// The first field line, right after the request line, folded or holding a NUL, and a request
    /// with no field at all but a folded one.
    @Test(arguments: [
        ("X-A: a\r\n b\r\nHost: localhost\r\n", "obs-fold"), ("X-A: a\u{0}b\r\nHost: localhost\r\n", "NUL byte"),
    ])
    func theFirstLineIsCheckedToo(fields: String, message: String) throws {
        let live = try Self.serve()
        let raw = try live.client().raw(Array("GET /ok HTTP/1.1\r\n\(fields)\r\n".utf8))
        let answer = ConformanceTests.split(raw)
        #expect(answer.status == 400, "answered: \(raw.prefix(120))")
        #expect(answer.body.contains(message), "answered: \(answer.body)")
        let lone = try live.client().raw(Array("GET /ok HTTP/1.0\r\nX-A: a\r\n b\r\n\r\n".utf8))
        #expect(ConformanceTests.split(lone).body.contains("obs-fold"), "answered: \(lone)")
    }

    /// A length libmicrohttpd reads as "unknown" (UInt64.max) or one past what a body can be is 413.
    @Test(arguments: ["18446744073709551615", "9223372036854775808"])
    func aHugeContentLengthIs413(length: String) throws {
        let live = try Self.serve()
        let raw = try live.client().raw(
            Array("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(length)\r\n\r\nhello".utf8))
        let answer = ConformanceTests.split(raw)
        #expect(answer.status == 413, "answered: \(raw.prefix(120))")
        #expect(ConformanceTests.field("Connection", in: answer.head)?.lowercased() == "close")
    }

    /// Identical repeated lengths are one length (RFC 9110 §8.6); plain and large header
    /// sections, with CR LF or bare LF line ends, pass the check.
    @Test(arguments: [
        "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
        "POST /echo HTTP/1.1\nHost: localhost\nX-Empty:\nContent-Length: 5\n\nhello",
        "POST /echo HTTP/1.1\r\nHost: localhost\nX-Tab: a\tb  \r\nContent-Length: 5\r\n\nhello",
        "POST /echo HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "b", count: 6000))\r\n"
            + "Content-Length: 5\r\n\r\nhello",
    ])
    func aPlainHeadIsRead(request: String) throws {
        let live = try Self.serve()
        let connection = try RawConnection(port: live.port)
        try connection.send(request)
        let head = try connection.read(through: "\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"), "answered: \(head)")
        #expect(try connection.read(through: "received 5").hasSuffix("received 5"))
    }
}
