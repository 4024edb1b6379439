import AppShellConcurrency
import AppShellTesting
import Foundation
import Testing

@testable import AppShellHTTP

/// What request bodies being received may hold (issue 31, finding 7): a route's own limit, and a
/// budget for all of them, which a body takes its declared length of at once.
@Suite struct BodyBudgetTests {
    static func server(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> LiveServer {
        var configuration = LiveServer.testConfiguration
        configuration.maxBodyBytes = 1_048_576
        configure(&configuration)
        var router = Router()
        router.add(.post, "/small", maxBodyBytes: 64) { request in .text("received \(request.body.count)") }
        router.post("/upload") { request in .text("received \(request.body.count)") }
        return try LiveServer(configuration: configuration, responder: router)
    }

    /// Fails on the code before: the route took bodies up to the server's 1 MiB (200).
    @Test func aRouteReadsNoMoreThanItsOwnLimit() throws {
        let live = try Self.server()
        #expect(try live.client().send("POST", "/small", body: [UInt8](repeating: 65, count: 64)).text == "received 64")
        let declared = try live.client().send("POST", "/small", body: [UInt8](repeating: 65, count: 65))
        #expect(declared.status == 413)
        #expect(declared.json["error"]?.stringValue == "the request body is larger than 64 bytes")
        var chunked =
            "POST /small HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        chunked += "50\r\n" + String(repeating: "B", count: 80) + "\r\n0\r\n\r\n"
        #expect(try live.client().raw(Array(chunked.utf8)).hasPrefix("HTTP/1.1 413"))
        #expect(try live.client().send("POST", "/upload", body: [UInt8](repeating: 65, count: 4096)).status == 200)
    }

    /// Two stalled uploads cannot hold more than the budget: the second is refused at once (503,
    /// `Retry-After`, the connection closed), and once the first is gone its room is given back.
    /// Fails on the code before: the second upload was admitted and waited for its body.
    @Test func bodiesBeingReceivedHoldNoMoreThanTheBudget() throws {
        let live = try Self.server { $0.maxBufferedBodyBytes = 4096 }
        var first: RawConnection? = try RawConnection(port: live.port, timeoutSeconds: 30)
        try first?.send("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3000\r\n\r\nabcdefghij")
        #expect(eventually { live.server.bufferedBodyBytes.load(ordering: .relaxed) == 3000 })
        let second = try RawConnection(port: live.port, timeoutSeconds: 30)
        let refused = try second.finish("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3000\r\n\r\n")
        #expect(refused.hasPrefix("HTTP/1.1 503"))
        #expect(refused.contains("Retry-After: 1"))
        #expect(refused.contains("too many request bodies at once"))
        // A chunked body grows into the budget as it arrives, and is refused past it.
        var chunked = "POST /upload HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunked += "800\r\n" + String(repeating: "C", count: 2048) + "\r\n0\r\n\r\n"
        let grown = try RawConnection(port: live.port, timeoutSeconds: 30)
        #expect(try grown.finish(chunked).hasPrefix("HTTP/1.1 503"))
        first = nil  // the client leaves: its connection closes
        #expect(first == nil)
        #expect(eventually { live.server.bufferedBodyBytes.load(ordering: .relaxed) == 0 })
        let third = try live.client().send("POST", "/upload", body: [UInt8](repeating: 66, count: 3000))
        #expect(third.text == "received 3000")
        // Given back when the request completes (just after its answer was sent).
        #expect(eventually { live.server.bufferedBodyBytes.load(ordering: .relaxed) == 0 })
    }
}
