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
