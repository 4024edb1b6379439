import AppShellTesting
import Foundation
import Testing

/// libmicrohttpd's own messages reach standard error only through the server's log, prefixed
/// `appshell: libmicrohttpd:`, and not at all for what the server meant to happen (a client
/// leaving an event stream).
@Suite struct LibraryMessagesTests {
    @Test func aClientLeavingAStreamWritesNoUnprefixedLine() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_STORE": "memory", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
        ])
        let port = try running.port()
        let client = TestClient(port: port)
        _ = try client.get("/api/state")
        let cookie = try #require(client.cookies["appshell_session"])
        for _ in 0..<3 {
            // Opened, its first event read, then left: the connection closes with the scope.
            let stream = try RawConnection(port: port)
            try stream.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: appshell_session=\(cookie)\r\n\r\n")
            _ = try stream.read(through: "data:")
        }
        // The server notices each client hanging up (epoll) and ends its stream.
        usleep(500_000)
        // A message libmicrohttpd writes itself: the server's log carries it, prefixed.
        _ = try client.raw(Array("GET /healthz HTTP/1.1\r\n\r\n".utf8))
        #expect(try client.get("/healthz").status == 200)
        running.terminate()
        #expect(running.waitForExit() == 0)
        let lines = running.errorText.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.hasPrefix("appshell: ") }, "\(lines)")
        #expect(!lines.contains { $0.contains("application error generating response") }, "\(lines)")
        let routed = "appshell: libmicrohttpd: Received HTTP/1.1 request without"
        #expect(lines.contains { $0.hasPrefix(routed) }, "\(lines)")
    }
}
