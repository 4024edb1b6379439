import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Glibc
import Testing

/// What event streams may cost: their backlog, their number, their connections once the client
/// left, and the server's shutdown while clients keep reconnecting.
@Suite struct EventStreamLimitsTests {

    /// Opens a stream on `connection` and returns the answer's header block.
    static func openStream(_ connection: RawConnection, path: String = "/events") throws -> String {
        try connection.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return try connection.read(through: "\r\n\r\n")
    }

    @Test func aStreamWhoseClientDoesNotReadIsEndedAtItsBacklogLimit() throws {
        let backlog = 64 * 1024
        let (live, opened) = try EventStreamTests.start {
            $0.eventStreamBacklogBytes = backlog
            $0.eventHeartbeatSeconds = 3600
        }
        let connection = try RawConnection(port: live.port)
        #expect(try Self.openStream(connection).hasPrefix("HTTP/1.1 200"))
        #expect(eventually { live.server.openEventStreams == 1 })
        let stream = try #require(opened.withLock { $0.first })
        let ended = Locked(false)
        stream.onClose { ended.withLock { $0 = true } }
        // 64 MiB: more than the kernel's socket buffers on both sides can take, so most of it
        // would wait in the stream if nothing bounded it.
        let data = String(repeating: "x", count: 4096)
        var largestBacklog = 0
        for index in 0..<16_384 where stream.isOpen {
            stream.send(event: "state", id: String(index), data: data)
            largestBacklog = max(largestBacklog, stream.queuedBytes)
        }
        #expect(largestBacklog <= backlog)
        // The client fell behind: the stream is ended (it would reconnect and get the state).
        #expect(eventually { ended.withLock { $0 } })
        #expect(!stream.isOpen)
        #expect(stream.queuedBytes == 0)
        #expect(eventually { live.server.openEventStreams == 0 })
        withExtendedLifetime(connection) {}
    }

    @Test func streamsBeyondTheLimitInAllAreRefusedAndOtherRequestsServed() throws {
        let (live, opened) = try EventStreamTests.start {
            $0.maxEventStreams = 4
            $0.maxEventStreamsPerIP = 8
            $0.eventHeartbeatSeconds = 3600
        }
        var connections: [RawConnection] = []
        for _ in 0..<4 {
            let connection = try RawConnection(port: live.port)
            #expect(try Self.openStream(connection).hasPrefix("HTTP/1.1 200"))
            connections.append(connection)
        }
        #expect(eventually { live.server.openEventStreams == 4 })
        // The fifth is refused with a clear answer, not suspended, and its stream is ended.
        let refused = try RawConnection(port: live.port)
        let head = try Self.openStream(refused)
        #expect(head.hasPrefix("HTTP/1.1 503"))
        #expect(head.contains("Retry-After: "))
        #expect(head.contains("Content-Type: application/json"))
        #expect(try refused.read(through: "}").contains("{\"error\":\"too many open event streams"))
        let refusedStream = try #require(opened.withLock { $0.count == 5 ? $0.last : nil })
        #expect(!refusedStream.isOpen)
        let refusedEnded = Locked(false)
        refusedStream.onClose { refusedEnded.withLock { $0 = true } }
        #expect(refusedEnded.withLock { $0 })  // it has ended: whatever subscribed it let it go
        #expect(live.server.openEventStreams == 4)
        // Ordinary requests still get through.
        let client = live.client()
        for _ in 0..<10 { #expect(try client.get("/ok").text == "ok") }
        // The clients go away: their streams end without waiting for a heartbeat.
        connections = []
        #expect(eventually { live.server.openEventStreams == 0 })
        #expect(opened.withLock { $0.allSatisfy { !$0.isOpen } })
        // And there is room for new streams again.
        for _ in 0..<4 {
            let connection = try RawConnection(port: live.port)
            #expect(try Self.openStream(connection).hasPrefix("HTTP/1.1 200"))
            connections.append(connection)
        }
        #expect(eventually { live.server.openEventStreams == 4 })
    }

    @Test func streamsBeyondTheLimitPerAddressAreRefused() throws {
        let (live, _) = try EventStreamTests.start {
            $0.maxEventStreams = 100
            $0.maxEventStreamsPerIP = 3
            $0.eventHeartbeatSeconds = 3600
        }
        var connections: [RawConnection] = []
        for _ in 0..<3 {
            let connection = try RawConnection(port: live.port)
            #expect(try Self.openStream(connection).hasPrefix("HTTP/1.1 200"))
            connections.append(connection)
        }
        let refused = try RawConnection(port: live.port)
        let head = try Self.openStream(refused)
        #expect(head.hasPrefix("HTTP/1.1 429"))
        #expect(head.contains("Retry-After: "))
        #expect(live.server.openEventStreams == 3)
        // One closes: its place is free again at once.
        connections.removeFirst()
        #expect(eventually { live.server.openEventStreams == 2 })
        let again = try RawConnection(port: live.port)
        #expect(try Self.openStream(again).hasPrefix("HTTP/1.1 200"))
        withExtendedLifetime(connections) {}
    }

    @Test func aHeadOfAStreamRouteSendsHeadersOnly() throws {
        let (live, opened) = try EventStreamTests.start()
        let connection = try RawConnection(port: live.port)
        try connection.send("HEAD /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try connection.read(through: "\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Type: text/event-stream"))
        // RFC 9110 §8.6: a HEAD answer may carry only the length the GET would send, and the GET
        // (a stream) has none. libmicrohttpd 0.9.75 frames a HEAD answer without a length only by
        // closing the connection, and it sends a chunked answer's last chunk even to HEAD.
        #expect(!head.lowercased().contains("content-length"), "got \(head.debugDescription)")
        #expect(!head.contains("Transfer-Encoding"))
        #expect(head.contains("Connection: close"))
        // Nothing follows the header block: no stray body before the connection closes.
        #expect(try connection.readToEnd() == "")
        // No stream was opened, and the one the handler made has ended.
        #expect(live.server.openEventStreams == 0)
        #expect(opened.withLock { $0.count == 1 && !$0[0].isOpen })
    }

    @Test func aStreamNeverSentEndsAndRunsItsCloseHandlers() throws {
        let closed = Locked(0)
        do {
            let stream = EventStream()
            stream.onClose { closed.withLock { $0 += 1 } }
            stream.send(data: "never sent")
        }
        #expect(closed.withLock { $0 } == 1)
    }

    @Test func shutdownEndsStreamsThatClientsKeepReopening() throws {
        let (live, _) = try EventStreamTests.start { $0.eventHeartbeatSeconds = 3600 }
        let port = live.port
        let stop = Locked(false)
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                // Like EventSource: reopen the stream when it ends, on a new connection (a stream
                // the server ends closes its connection), a moment later when that failed (an
                // EventSource waits its retry time, 3 s by default).
                while !stop.withLock({ $0 }) {
                    guard let connection = try? RawConnection(port: port) else { continue }
                    while !stop.withLock({ $0 }) {
                        guard (try? Self.openStream(connection)) != nil,
                            (try? connection.read(through: "0\r\n\r\n")) != nil
                        else { break }
                    }
                    usleep(20_000)
                }
            }
        }
        #expect(eventually { live.server.openEventStreams == 8 })
        // A request still in flight (half its body sent) keeps the shutdown waiting while the
        // streams' clients reopen them.
        let held = try RawConnection(port: port)
        try held.send("POST /ok HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n\r\nab")
        #expect(eventually { live.server.statistics.inFlight == 9 })
        let finished = Locked<Bool?>(nil)
        Thread.detachNewThread {
            let result = live.stop(timeoutSeconds: 5)
            finished.withLock { $0 = result }
        }
        // The streams end and their connections close; the clients' new connections are refused
        // while the server drains, so none is open again while the request is still in flight.
        #expect(eventually { live.server.openEventStreams == 0 })
        #expect(finished.withLock { $0 } == nil)
        try held.send("cd")
        #expect(try held.read(through: "\r\n\r\n").hasPrefix("HTTP/1.1 405"))
        // True only when every request, streams included, ended within the timeout; a stream left
        // suspended would make libmicrohttpd abort the process when it stops.
        #expect(eventually(within: 10) { finished.withLock { $0 } != nil })
        #expect(finished.withLock { $0 } == true)
        #expect(live.server.openEventStreams == 0)
        stop.withLock { $0 = true }
        done.wait()
    }
}
