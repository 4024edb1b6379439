import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Answers that come later (`Response.deferred`): the request waits, not a thread — its
/// connection suspended, or (a brief answer) parked on its event loop. Each test runs both ways.
@Suite struct DeferredResponseTests {
    /// A server with ONE thread whose `/later` answers are given by the test through `waiting`;
    /// `brief`: they are brief answers (parked, not suspended).
    static func start(_ waiting: Locked<[PendingResponse]>, brief: Bool = false) throws -> LiveServer {
        var router = Router()
        router.get("/now") { _ in .text("now") }
        router.get("/later") { _ in
            let pending = PendingResponse(brief: brief)
            waiting.withLock { $0.append(pending) }
            return .deferred(pending, headers: ["X-Deferred": "yes", "X-Both": "deferred"])
        }
        var configuration = LiveServer.testConfiguration
        configuration.threads = 1
        return try LiveServer(configuration: configuration, responder: router)
    }

    @Test(arguments: [false, true])
    func theOnlyThreadServesOthersWhileAnAnswerIsAwaitedAndTheAnswerComesFromAnyThread(brief: Bool) throws {
        let waiting = Locked<[PendingResponse]>([])
        let live = try Self.start(waiting, brief: brief)
        let answer = Locked<TestResponse?>(nil)
        let client = live.client()
        Thread.detachNewThread {
            let response = try? client.get("/later")
            answer.withLock { $0 = response }
        }
        #expect(eventually { waiting.withLock { $0.count } == 1 })
        #expect(try live.client().get("/now").text == "now")
        #expect(answer.withLock { $0 } == nil)
        let pending = try #require(waiting.withLock { $0.first })
        Thread.detachNewThread {
            var response = Response.text("later")
            response.headers.add(name: "X-Both", value: "answer")
            pending.fulfil(response)
        }
        #expect(eventually { answer.withLock { $0 } != nil })
        let response = try #require(answer.withLock { $0 })
        #expect(response.text == "later")
        // The deferred response's fields reach the answer unless it has its own.
        #expect(response.headers["X-Deferred"] == "yes")
        #expect(response.headers["X-Both"] == "answer")
        // The connection is kept alive and serves the next request.
        #expect(try client.get("/now").text == "now")
        #expect(live.server.waitingDeferredResponses == 0)
    }

    @Test(arguments: [false, true])
    func anAnswerGivenBeforeTheServerWaitsIsSentAtOnce(brief: Bool) throws {
        var router = Router()
        router.get("/ready") { _ in
            let pending = PendingResponse(brief: brief)
            pending.fulfil(.text("ready"))
            return .deferred(pending)
        }
        let live = try LiveServer(responder: router)
        #expect(try live.client().get("/ready").text == "ready")
    }

    @Test(arguments: [false, true])
    func shutdownAnswersWaitingRequests503AndReturnsWithoutAborting(brief: Bool) throws {
        let waiting = Locked<[PendingResponse]>([])
        let live = try Self.start(waiting, brief: brief)
        let answers = Locked<[TestResponse]>([])
        for _ in 0..<3 {
            let client = live.client()
            Thread.detachNewThread {
                if let response = try? client.get("/later") { answers.withLock { $0.append(response) } }
            }
        }
        #expect(eventually { waiting.withLock { $0.count } == 3 })
        // One's work has begun: it is waited for until the timeout, then answered 503 too.
        let claimed = try #require(waiting.withLock { $0.first })
        #expect(claimed.claim())
        #expect(live.stop(timeoutSeconds: 1) == false)
        #expect(eventually { answers.withLock { $0.count } == 3 })
        for response in answers.withLock({ $0 }) {
            #expect(response.status == 503)
            #expect(response.headers["Retry-After"] == "5")
        }
        // The work that never began finds its request answered; a late answer is dropped.
        #expect(waiting.withLock { $0 }.dropFirst().allSatisfy { !$0.claim() })
        claimed.fulfil(.text("too late"))
    }

    @Test(arguments: [false, true])
    func aClientThatLeavesWhileItsAnswerIsAwaitedCrashesNothing(brief: Bool) throws {
        let waiting = Locked<[PendingResponse]>([])
        let live = try Self.start(waiting, brief: brief)
        do {
            let connection = try RawConnection(port: live.port)
            try connection.send("GET /later HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(eventually { waiting.withLock { $0.count } == 1 })
        }
        // The client's socket is closed; the answer comes later and goes nowhere.
        usleep(50_000)
        try #require(waiting.withLock { $0.first }).fulfil(.text("nobody listens"))
        #expect(eventually { live.server.waitingDeferredResponses == 0 })
        #expect(try live.client().get("/now").text == "now")
        #expect(live.stop(timeoutSeconds: 2))
    }

    /// Fails on the code before: the answer given for a client that left resumed its connection
    /// first and told the work after, so the request could stop being counted as waiting while
    /// its work was not told yet (a login's check, queued, was then taken and run). Here the
    /// work's handler is slow to show it.
    @Test func aClientThatLeavesHasItsWorkToldBeforeItsRequestStopsWaiting() throws {
        let waiting = Locked<[PendingResponse]>([])
        let live = try Self.start(waiting)
        let told = Locked(false)
        do {
            let connection = try RawConnection(port: live.port)
            try connection.send("GET /later HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(eventually { live.server.waitingDeferredResponses == 1 })
            try #require(waiting.withLock { $0.first }).onCancel {
                usleep(200_000)
                told.withLock { $0 = true }
            }
            withExtendedLifetime(connection) {}
        }
        #expect(eventually { live.server.waitingDeferredResponses == 0 })
        #expect(told.withLock { $0 })
        #expect(live.stop(timeoutSeconds: 2))
    }

    /// While a request is parked the loop waits for events rather than for libmicrohttpd's zero
    /// timeout: a connection whose body is already in its socket beyond what one read takes is
    /// still read to its end, not left waiting for an event.
    @Test func aLargeBodyIsReadWhileAnotherRequestIsParked() throws {
        let waiting = Locked<[PendingResponse]>([])
        var router = Router()
        router.get("/later") { _ in
            let pending = PendingResponse(brief: true)
            waiting.withLock { $0.append(pending) }
            return .deferred(pending)
        }
        router.post("/size") { request in .text("\(request.body.count)") }
        var configuration = LiveServer.testConfiguration
        configuration.threads = 1
        let live = try LiveServer(configuration: configuration, responder: router)
        let parked = try RawConnection(port: live.port)
        try parked.send("GET /later HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(eventually { waiting.withLock { $0.count } == 1 })
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 900_000)
        #expect(try live.client().send("POST", "/size", body: body).text == "900000")
        try #require(waiting.withLock { $0.first }).fulfil(.text("later"))
        #expect(try parked.readToEnd().hasSuffix("later"))
    }

    /// A brief answer that waits for a slow one (`forward`): the parked request is answered when
    /// the suspended work's answer comes, and the other way round.
    @Test(arguments: [false, true])
    func aBriefAnswerForwardedFromASlowOneArrives(briefOuter: Bool) throws {
        let inner = Locked<[PendingResponse]>([])
        var router = Router()
        router.get("/chain") { _ in
            let first = PendingResponse(brief: !briefOuter)
            let outer = PendingResponse(brief: briefOuter)
            inner.withLock { $0.append(first) }
            first.forward(to: outer, adding: ["X-Chain": "yes"])
            return .deferred(outer)
        }
        var configuration = LiveServer.testConfiguration
        configuration.threads = 1
        let live = try LiveServer(configuration: configuration, responder: router)
        let answer = Locked<TestResponse?>(nil)
        let client = live.client()
        Thread.detachNewThread { answer.withLock { $0 = try? client.get("/chain") } }
        #expect(eventually { inner.withLock { $0.count } == 1 })
        try #require(inner.withLock { $0.first }).fulfil(.text("chained"))
        #expect(eventually { answer.withLock { $0 } != nil })
        #expect(answer.withLock { $0 }?.text == "chained")
        #expect(answer.withLock { $0 }?.headers["X-Chain"] == "yes")
    }
}

/// Answers given together by one thread (`ThreadBatch`, as the store writer answers the requests
/// of one transaction): suspended, the first connection is resumed at the batch's end and the
/// server's thread resumes the others; parked, the loop is woken once at the batch's end — every
/// answer arrives, also when a client of the batch went away.
@Suite struct BatchedAnswerTests {
    @Test(arguments: [false, true], [false, true])
    func everyAnswerOfABatchArrives(firstClientLeaves: Bool, brief: Bool) throws {
        let waiting = Locked<[PendingResponse]>([])
        let live = try DeferredResponseTests.start(waiting, brief: brief)
        let count = 12
        var connections: [RawConnection?] = []
        for index in 0..<count {
            let connection = try RawConnection(port: live.port)
            try connection.send("GET /later HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            connections.append(connection)
            #expect(eventually { waiting.withLock { $0.count } == index + 1 })
        }
        // The connection resumed first is one whose client is gone: the others must not wait for it.
        if firstClientLeaves { connections[0] = nil }
        let pending = waiting.withLock { $0 }
        Thread.detachNewThread {
            ThreadBatch.run {
                for (index, answer) in pending.enumerated() { answer.fulfil(.text("answer \(index)")) }
            }
        }
        for index in (firstClientLeaves ? 1 : 0)..<count {
            let text = try #require(connections[index]).readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.hasSuffix("answer \(index)"))
        }
        #expect(eventually { live.server.waitingDeferredResponses == 0 })
    }
}
