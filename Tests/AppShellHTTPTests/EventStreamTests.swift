import AppShellConcurrency
import AppShellTesting
import Foundation
import Glibc
import Testing

@testable import AppShellHTTP

/// Server-sent events on suspended connections.
@Suite struct EventStreamTests {
    /// A server whose `/events` opens a stream and hands it to the test.
    static func start(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> (LiveServer, Locked<[EventStream]>) {
        let opened = Locked<[EventStream]>([])
        var router = Router()
        router.get("/events") { _ in
            let stream = EventStream()
            opened.withLock { $0.append(stream) }
            return .events(stream)
        }
        router.get("/ok") { _ in .text("ok") }
        var configuration = LiveServer.testConfiguration
        configure(&configuration)
        return (try LiveServer(configuration: configuration, responder: router), opened)
    }

    @Test func eventsArriveAsTheyAreSent() throws {
        let (live, opened) = try Self.start()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try connection.read(through: "\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Type: text/event-stream; charset=utf-8"))
        #expect(eventually { opened.withLock { $0.count } == 1 })
        let stream = try #require(opened.withLock { $0.first })
        stream.send(event: "state", id: "7", data: "{\"a\":1}\nsecond line")
        let event = try connection.read(through: "second line\n\n")
        #expect(event.contains("event: state\nid: 7\ndata: {\"a\":1}\ndata: second line\n\n"))
        // Nothing is queued now: the connection is suspended, and the next event still arrives.
        usleep(100_000)
        stream.send(data: "later")
        #expect(try connection.read(through: "later\n\n").contains("data: later"))
        #expect(live.server.openEventStreams == 1)
        stream.close()
        // The last chunk ends the response; the connection itself stays open for the next request.
        #expect(try connection.read(through: "\r\n0\r\n\r\n").hasSuffix("0\r\n\r\n"))
        #expect(eventually { live.server.openEventStreams == 0 })
    }

    /// An event's `data` becomes one `data:` line per line of it, at every break a client reads
    /// as one (LF, CR, CRLF: the CR of a CRLF is not left in the line), UTF-8 kept as it is.
    @Test func dataIsCutIntoLinesAtEveryLineBreak() {
        func framed(_ event: String?, _ id: String?, _ data: String) -> String {
            String(decoding: EventStream.frame(event: event, id: id, data: data), as: UTF8.self)
        }
        #expect(framed("state", "c.7", "{\"a\":\"é😀\"}") == "event: state\nid: c.7\ndata: {\"a\":\"é😀\"}\n\n")
        #expect(framed(nil, nil, "") == "data: \n\n")
        #expect(framed(nil, nil, "a\nb\r\nc\rd") == "data: a\ndata: b\ndata: c\ndata: d\n\n")
        #expect(framed(nil, "1", "a\n\nb\n") == "id: 1\ndata: a\ndata: \ndata: b\ndata: \n\n")
        #expect(framed(nil, nil, "\r\n") == "data: \ndata: \n\n")
    }

    @Test func heartbeatsKeepTheStreamAliveAndFindGoneClients() throws {
        let (live, opened) = try Self.start { $0.eventHeartbeatSeconds = 1 }
        var connection: RawConnection? = try RawConnection(port: live.port)
        try connection?.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        _ = try connection?.read(through: "\r\n\r\n")
        #expect(try connection?.read(through: ": heartbeat\n\n") != nil)
        let stream = try #require(opened.withLock { $0.first })
        let closed = Locked(false)
        stream.onClose { closed.withLock { $0 = true } }
        connection = nil  // the client goes away
        #expect(eventually { closed.withLock { $0 } })
        #expect(!stream.isOpen)
        #expect(live.server.openEventStreams == 0)
    }

    /// The heartbeats of many streams are sent in rounds spread over the interval
    /// (`EventStreamRegistry.heartbeatRounds`), and every stream still gets one each interval,
    /// whichever round its token falls in.
    @Test func everyStreamGetsItsHeartbeatsWhenTheyAreSpreadOverRounds() throws {
        let (live, opened) = try Self.start { $0.eventHeartbeatSeconds = 1 }
        var connections: [RawConnection] = []
        for _ in 0..<(EventStreamRegistry.heartbeatRounds + 3) {
            let connection = try RawConnection(port: live.port)
            try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = try connection.read(through: "\r\n\r\n")
            connections.append(connection)
        }
        #expect(eventually { opened.withLock { $0.count } == connections.count })
        for connection in connections {
            // Two in a row: the stream stays in its round after its first.
            #expect(try connection.read(through: ": heartbeat\n\n").hasSuffix(": heartbeat\n\n"))
            let second = try connection.read(through: ": heartbeat\n\n")
            #expect(second.hasSuffix(": heartbeat\n\n") && second.utf8.count < 24, "\(second.debugDescription)")
        }
        #expect(live.server.openEventStreams == connections.count)
    }

    /// The heartbeat rounds split the open streams: each stream is in exactly one round, and no
    /// round holds more than its share (a burst of all of them at once held the server's thread).
    @Test func heartbeatRoundsSplitTheStreams() {
        let registry = EventStreamRegistry(limit: 1000, limitPerAddress: 0)
        let streams = (0..<120).map { _ in EventStream() }
        for stream in streams { #expect(registry.admit(stream, address: "127.0.0.1", socket: -1) == .admitted) }
        var seen: [ObjectIdentifier: Int] = [:]
        for round in 0..<EventStreamRegistry.heartbeatRounds {
            let due = registry.streams(inHeartbeatRound: UInt64(round))
            // A share of them, never all at once (120 is a multiple of the 60 rounds).
            #expect(due.count == streams.count / EventStreamRegistry.heartbeatRounds && due.count < streams.count)
            for stream in due { seen[ObjectIdentifier(stream), default: 0] += 1 }
        }
        #expect(seen.count == streams.count && seen.values.allSatisfy { $0 == 1 })
        for stream in streams { stream.discard() }
        #expect(registry.count == 0)
    }

    /// An open stream lets its buffer go once everything queued was sent (thousands of idle
    /// streams would each keep the room of their largest event), and events larger than the
    /// first, and heartbeats, still arrive afterwards.
    @Test func aStreamHoldsNoBufferOnceAllIsSent() throws {
        let (live, opened) = try Self.start { $0.eventHeartbeatSeconds = 1 }
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        _ = try connection.read(through: "\r\n\r\n")
        #expect(eventually { opened.withLock { $0.count } == 1 })
        let stream = try #require(opened.withLock { $0.first })
        stream.send(event: "state", id: "1", data: String(repeating: "a", count: 1500) + "end1")
        #expect(try connection.read(through: "end1\n\n").contains("event: state\nid: 1\ndata: aaaa"))
        #expect(eventually { stream.bufferCapacity == 0 })
        stream.send(event: "state", id: "2", data: String(repeating: "b", count: 3000) + "end2")
        #expect(try connection.read(through: "end2\n\n").contains("event: state\nid: 2\ndata: bbbb"))
        #expect(eventually { stream.bufferCapacity == 0 })
        #expect(try connection.read(through: ": heartbeat\n\n").hasSuffix(": heartbeat\n\n"))
        #expect(eventually { stream.bufferCapacity == 0 })
        #expect(stream.isOpen && live.server.openEventStreams == 1)
    }

    /// An HTTP/1.0 client's stream is sent as it is (no chunks: it ends by closing), through the
    /// response's own buffer of `HTTPServer.streamBlockBytes`: an event many times that size
    /// arrives whole and in order.
    @Test func anHTTP10StreamGetsEventsLargerThanItsBuffer() throws {
        let (live, opened) = try Self.start()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /events HTTP/1.0\r\nHost: localhost\r\n\r\n")
        let head = try connection.read(through: "\r\n\r\n")
        #expect(head.contains(" 200 OK\r\n") && !head.contains("chunked"))
        #expect(eventually { opened.withLock { $0.count } == 1 })
        let stream = try #require(opened.withLock { $0.first })
        let lines = (0..<40).map { "line \($0) " + String(repeating: "x", count: 60) }
        #expect(lines.joined(separator: "\n").utf8.count > 8 * HTTPServer.streamBlockBytes)
        stream.send(event: "state", id: "9", data: lines.joined(separator: "\n"))
        stream.send(data: "after")
        let expected =
            "event: state\nid: 9\n" + lines.map { "data: \($0)\n" }.joined() + "\ndata: after\n\n"
        #expect(try connection.read(through: "data: after\n\n") == expected)
        stream.close()
        #expect(try connection.readToEnd() == "")
        #expect(eventually { live.server.openEventStreams == 0 })
    }

    @Test func shutdownEndsOpenStreams() throws {
        let (live, opened) = try Self.start()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        _ = try connection.read(through: "\r\n\r\n")
        #expect(eventually { opened.withLock { $0.count } == 1 })
        #expect(live.stop(timeoutSeconds: 5))
        #expect(try connection.readToEnd().hasSuffix("0\r\n\r\n"))
    }

    @Test func aThousandOpenStreamsLeaveOtherRequestsServed() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let (live, opened) = try Self.start {
            // Streams may take three quarters of the connections: 1 000 of 1 400.
            $0.maxConnections = 1400
            $0.maxConnectionsPerIP = 1400
            $0.maxEventStreams = 1000
            $0.maxEventStreamsPerIP = 1000
        }
        var connections: [RawConnection] = []
        for _ in 0..<1000 {
            let connection = try RawConnection(port: live.port)
            try connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            connections.append(connection)
        }
        for connection in connections { _ = try connection.read(through: "\r\n\r\n") }
        #expect(eventually { live.server.openEventStreams == 1000 })
        // Every event loop is free: ordinary requests are answered while the streams stay open.
        let client = live.client()
        for _ in 0..<100 { #expect(try client.get("/ok").text == "ok") }
        // And every stream still gets its events.
        for stream in opened.withLock({ $0 }) { stream.send(data: "ping") }
        for connection in connections { #expect(try connection.read(through: "ping\n\n").contains("data: ping")) }
    }
}
