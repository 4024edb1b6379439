import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Testing

/// The event streams' heartbeats on a timer queue the server is given (the app's shared one): they
/// run on it, and the server's shutdown cancels them without stopping the queue, which its owner
/// stops.
@Suite struct SharedHeartbeatTests {
    @Test func heartbeatsRunOnTheSharedQueueAndShutdownLeavesItRunning() throws {
        let timers = TimerQueue(name: "test-timers")
        defer { timers.stop() }
        var router = Router()
        router.get("/events") { _ in .events(EventStream()) }
        var configuration = LiveServer.testConfiguration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventHeartbeatSeconds = 1
        let server = HTTPServer(configuration: configuration, responder: router, timers: timers)
        try server.start()
        // The heartbeat is the queue's one timer; the server did not start the queue: its owner does.
        #expect(timers.pendingCount == 1)
        #expect(!timers.isRunning)
        timers.start()
        let connection = try RawConnection(port: server.port)
        try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.read(through: ": heartbeat\n\n").hasSuffix(": heartbeat\n\n"))
        #expect(server.shutdown())
        #expect(timers.pendingCount == 0)
        #expect(timers.isRunning)
    }
}
