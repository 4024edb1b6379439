import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Every answer carries an `X-Request-ID`: the client's when it is a short token, else a new one
/// that no other request got; the handler sees the same id.
@Suite struct RequestIDTests {
    /// `/echo` answers the id its handler saw; `/fail` throws a non-HTTP error; `/big` reads bodies.
    static func start() throws -> LiveServer {
        struct Failure: Error {}
        var router = Router()
        router.get("/echo") { request in .text(request.requestID) }
        router.get("/fail") { _ in throw Failure() }
        router.post("/big") { _ in .text("ok") }
        let prepared = PreparedResponse(.json(bytes: Array(#"{"same":true}"#.utf8)))
        router.get("/prepared") { _ in .prepared(prepared) }
        var configuration = LiveServer.testConfiguration
        configuration.maxBodyBytes = 16
        return try LiveServer(configuration: configuration, responder: router)
    }

    static func isGenerated(_ id: String?) -> Bool {
        guard let id, id.utf8.count == 15 else { return false }
        return id.unicodeScalars.allSatisfy {
            $0.properties.isASCIIHexDigit || ("A"..."Z").contains($0) || ("a"..."z").contains($0)
        }
    }

    @Test func anAcceptableIncomingIDIsKeptAndSeenByTheHandler() throws {
        let live = try Self.start()
        let client = live.client()
        let id = "Trace-1.2_3"
        let answer = try client.get("/echo", headers: [("X-Request-ID", id)])
        #expect(answer.headers["X-Request-ID"] == id)
        #expect(answer.text == id)
        let longest = String(repeating: "a", count: 64)
        #expect(try client.get("/echo", headers: [("X-Request-ID", longest)]).headers["X-Request-ID"] == longest)
    }

    @Test(arguments: [String(repeating: "a", count: 65), "has space", "semi;colon", "quote\"", "ünï", "a/b"])
    func anUnacceptableIncomingIDIsReplaced(incoming: String) throws {
        let live = try Self.start()
        let answer = try live.client().get("/echo", headers: [("X-Request-ID", incoming)])
        let sent = answer.headers["X-Request-ID"]
        #expect(sent != incoming)
        #expect(Self.isGenerated(sent))
        #expect(answer.text == sent)
    }

    @Test func generatedIDsAreUniqueAndOnEveryKindOfAnswer() throws {
        let live = try Self.start()
        let client = live.client()
        var seen: Set<String> = []
        // 200 (also a prepared answer twice: each time its own id), 404, 405, 500, 413.
        let answers = [
            try client.get("/echo"), try client.get("/prepared"), try client.get("/prepared"),
            try client.get("/nowhere"),
            try client.send("DELETE", "/echo"), try client.get("/fail"),
            try client.send("POST", "/big", body: Array(repeating: 0x61, count: 64)),
        ]
        #expect(answers.map(\.status) == [200, 200, 200, 404, 405, 500, 413])
        for answer in answers {
            let id = answer.headers["X-Request-ID"]
            #expect(Self.isGenerated(id), "\(answer.status): \(id ?? "none")")
            if let id { seen.insert(id) }
        }
        for _ in 0..<200 { seen.insert(try client.get("/echo").headers["X-Request-ID"] ?? "") }
        #expect(seen.count == 207)
    }

    /// A connection sends a prepared answer again with the id of each request, whatever its
    /// length; the body and other fields stay as prepared.
    @Test func aPreparedAnswerSentAgainOnOneConnectionCarriesEachRequestsID() throws {
        let live = try Self.start()
        let client = live.client()
        let incoming: [String?] = [nil, "a", nil, "abcdefghijklmnopq", "fifteen-chars-x", nil, "a", "a", nil]
        var sent: [String] = []
        for id in incoming {
            let answer = try client.get("/prepared", headers: id.map { [("X-Request-ID", $0)] } ?? [])
            #expect(answer.status == 200)
            #expect(answer.text == #"{"same":true}"#)
            #expect(answer.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(answer.headers.values(for: "X-Request-ID").count == 1)
            let got = try #require(answer.headers["X-Request-ID"])
            if let id { #expect(got == id) } else { #expect(Self.isGenerated(got)) }
            sent.append(got)
        }
        #expect(Set(sent.enumerated().filter { incoming[$0.offset] == nil }.map(\.element)).count == 4)
        // Another connection at the same time has its own.
        let other = try live.client().get("/prepared", headers: [("X-Request-ID", "other")])
        #expect(other.headers["X-Request-ID"] == "other")
        #expect(try client.get("/prepared").headers["X-Request-ID"] != "other")
    }

    @Test func aMalformedRequestTargetIsAnsweredWithAnID() throws {
        let live = try Self.start()
        let connection = try RawConnection(port: live.port)
        let head = try connection.finish("GET /a%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-ID: bad-target-1\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 400"))
        #expect(head.contains("X-Request-ID: bad-target-1\r\n"))
    }

    /// An error logged while handling a request names it with the id its answer carries.
    @Test func anErrorLoggedWhileHandlingARequestNamesIt() throws {
        let live = try Self.start()
        let client = live.client()
        let (answers, log) = try Self.capturingStandardError {
            [try client.get("/fail"), try client.get("/fail", headers: [("X-Request-ID", "trace-me.7")])]
        }
        #expect(answers.map(\.status) == [500, 500])
        let generated = try #require(answers[0].headers["X-Request-ID"])
        #expect(answers[1].headers["X-Request-ID"] == "trace-me.7")
        let lines = log.split(separator: "\n")
        #expect(lines.contains("appshell: [request \(generated)] GET /fail failed: Failure()"))
        #expect(lines.contains("appshell: [request trace-me.7] GET /fail failed: Failure()"))
    }

    /// Runs `body` with standard error going to a pipe; returns its result and what was written
    /// (other tests' lines may be among them).
    static func capturingStandardError<Result>(_ body: () throws -> Result) throws -> (Result, String) {
        // Close-on-exec, so that no process another test starts meanwhile holds it; read without
        // waiting: each line was written before its request was answered.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        let saved = dup(2)
        _ = dup2(ends[1], 2)
        close(ends[1])
        let result: Result
        do {
            defer {
                _ = dup2(saved, 2)
                close(saved)
            }
            result = try body()
        }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            text += buffer[0..<count]
        }
        close(ends[0])
        return (result, String(decoding: text, as: UTF8.self))
    }

    @Test func acceptableIDs() {
        #expect(RequestID.isAcceptable("a"))
        #expect(RequestID.isAcceptable("A-z_0.9"))
        #expect(RequestID.isAcceptable(String(repeating: "x", count: 64)))
        #expect(!RequestID.isAcceptable(""))
        #expect(!RequestID.isAcceptable(String(repeating: "x", count: 65)))
        #expect(!RequestID.isAcceptable("a b"))
        #expect(!RequestID.isAcceptable("a\r\nb"))
        #expect(RequestID.resolve("keep.me") == "keep.me")
        #expect(Self.isGenerated(RequestID.resolve("drop me")))
        #expect(Self.isGenerated(RequestID.resolve(nil)))
        #expect(RequestID.generate() != RequestID.generate())
    }
}
