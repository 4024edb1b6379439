import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Many clients at once, and graceful shutdown.
@Suite struct ConcurrencyTests {
    @Test func answers200ConcurrentRequestsFrom16Threads() throws {
        var router = Router()
        router.get("/n/:n") { request in .text(request.parameters["n"] ?? "") }
        let live = try LiveServer(responder: router)
        let answered = Locked<[Int: String]>([:])
        let group = DispatchGroup()
        for thread in 0..<16 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let client = live.client()
                var index = thread
                while index < 200 {
                    if let response = try? client.get("/n/\(index)"), response.status == 200 {
                        answered.withLock { $0[index] = response.text }
                    }
                    index += 16
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let results = answered.withLock { $0 }
        #expect(results.count == 200)
        #expect(results.allSatisfy { String($0.key) == $0.value })
    }

    /// A connection's state is used again by each request on it: every request still sees only
    /// its own method, headers and body, from one client or many at once; and the state of every
    /// connection is let go once its client has closed.
    @Test func keepAliveRequestsSeeOnlyTheirOwnHeadersAndBody() throws {
        var router = Router()
        router.get("/echo") { request in
            .text("GET \(request.headers["X-N"] ?? "-") \(request.headers["X-Big"]?.count ?? 0) \(request.body.count)")
        }
        router.post("/echo") { request in
            .text("POST \(request.headers["X-N"] ?? "-") \(request.headers["X-Big"]?.count ?? 0) \(request.body.count)")
        }
        let live = try LiveServer(responder: router)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let client = live.client()
                for index in 0..<40 {
                    let number = "\(thread)-\(index)"
                    // Now and then a large header, so the reused buffer grows and is replaced.
                    let big = index % 7 == 3 ? String(repeating: "b", count: 5_000 + index) : nil
                    var headers = [("X-N", number)]
                    if let big { headers.append(("X-Big", big)) }
                    let expected: String
                    let response: TestResponse?
                    if index % 2 == 0 {
                        response = try? client.get("/echo", headers: headers)
                        expected = "GET \(number) \(big?.count ?? 0) 0"
                    } else {
                        let body = [UInt8](repeating: 65, count: index * 10)
                        response = try? client.send("POST", "/echo", headers: headers, body: body)
                        expected = "POST \(number) \(big?.count ?? 0) \(body.count)"
                    }
                    if response?.status != 200 || response?.text != expected {
                        failures.withLock { $0.append("\(expected) answered \(response?.text ?? "nothing")") }
                    }
                }
                client.close()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 } == [])
        // The server notices the closes asynchronously.
        var open = live.server.statistics.openConnections
        for _ in 0..<500 where open > 0 {
            usleep(10_000)
            open = live.server.statistics.openConnections
        }
        #expect(open == 0)
    }

    @Test func shutdownLetsInFlightRequestsFinish() throws {
        let entered = DispatchSemaphore(value: 0)
        var router = Router()
        router.get("/slow") { _ in
            entered.signal()
            usleep(500_000)
            return .text("finished")
        }
        let live = try LiveServer(responder: router)
        let port = live.port
        let result = Locked<TestResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.withLock { $0 = try? TestClient(port: port).get("/slow") }
            done.signal()
        }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        #expect(live.stop(timeoutSeconds: 10))
        #expect(done.wait(timeout: .now() + 10) == .success)
        let response = try #require(result.withLock { $0 })
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(throws: (any Error).self) { try TestClient(port: port).get("/slow") }
    }

    @Test func shutdownGivesUpAfterItsTimeout() throws {
        let entered = DispatchSemaphore(value: 0)
        var router = Router()
        router.get("/slower") { _ in
            entered.signal()
            usleep(1_500_000)
            return .text("late")
        }
        let live = try LiveServer(responder: router)
        let port = live.port
        Thread.detachNewThread { _ = try? TestClient(port: port).get("/slower") }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        #expect(live.stop(timeoutSeconds: 0) == false)
    }
}
