import AppShell
import AppShellHTTP
import AppShellSessions
import AppShellTesting
import DefaultsBackendTestSupport
import Foundation
import Testing

/// A memory backend whose group commits wait while the test holds them.
final class HeldBackend: ForwardingDefaultsBackend, @unchecked Sendable {
    // @unchecked: `held` and `entered` are used under `condition` only.
    /// The backend that does the work.
    let inner: any DefaultsBackend

    /// A backend forwarding to `inner` but for what it does itself.
    init(inner: any DefaultsBackend = MemoryDefaultsBackend()) { self.inner = inner }

    private let condition = NSCondition()
    private var held = false
    private var entered = 0

    func hold() { locked { $0.held = true } }
    func release() { locked { $0.held = false } }

    /// Waits until `count` batches reached the backend.
    func waitUntilEntered(_ count: Int) {
        condition.lock()
        while entered < count { condition.wait() }
        condition.unlock()
    }

    private func locked(_ body: (HeldBackend) -> Void) {
        condition.lock()
        body(self)
        condition.broadcast()
        condition.unlock()
    }

    func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        condition.lock()
        entered += 1
        condition.broadcast()
        while held { condition.wait() }
        condition.unlock()
        for write in writes { try inner.apply(write) }
    }
}

/// Group commit over HTTP: answers wait for their write to be durable without holding a server
/// thread, a session's next request runs only then, and a full writer queue answers 503.
@Suite struct GroupCommitHTTPTests {
    /// One server thread: whatever waits for the writer must not hold it.
    static func start(queue: Int) throws -> (LiveServer, HeldBackend, SessionRegistry) {
        let (router, backend, registry) = try makeRouter(queue: queue)
        return (try LiveServer(configuration: configuration, responder: router), backend, registry)
    }

    /// The same, served in `mode`.
    static func start(_ mode: TestMode, queue: Int) throws -> (TestServer, HeldBackend, SessionRegistry) {
        let (router, backend, registry) = try makeRouter(queue: queue)
        return (try TestServer(mode, configuration: configuration, responder: router), backend, registry)
    }

    static var configuration: HTTPServerConfiguration {
        var configuration = LiveServer.testConfiguration
        configuration.threads = 1
        return configuration
    }

    static func makeRouter(queue: Int) throws -> (Router, HeldBackend, SessionRegistry) {
        let backend = HeldBackend()
        let registry = SessionRegistry(
            configuration: SessionConfiguration(), backend: backend, groupCommitQueue: queue)
        let cookie = SessionCookie(baseName: "appshell_session", secure: false)
        var router = Router(fallback: try StaticFiles(directory: NSTemporaryDirectory()))
        router.post(
            "/visit",
            SessionResponder(registry: registry, cookie: cookie) { _, session in
                session.defaults.set(session.defaults.integer(forKey: "visits") + 1, forKey: "visits")
                return .text("\(session.defaults.integer(forKey: "visits"))")
            })
        // Answers later, from another thread, once its change (when `write`) is committed.
        for (path, write) in [("/later-writing", true), ("/later", false)] {
            router.post(
                path,
                SessionResponder(registry: registry, cookie: cookie) { _, session in
                    if write { session.defaults.set(session.defaults.integer(forKey: "visits") + 1, forKey: "visits") }
                    let seen = session.defaults.integer(forKey: "visits")
                    let pending = PendingResponse()
                    session.afterCommit { Thread.detachNewThread { pending.fulfil(.text("later \(seen)")) } }
                    return .deferred(pending)
                })
        }
        router.get("/healthz") { _ in .text("ok") }
        return (router, backend, registry)
    }

    /// Sends `POST /visit` with `cookies` on a thread of its own; the answer goes to `answers`.
    static func visit(
        _ port: Int, _ cookies: [String: String], _ answers: Answers, as name: String, path: String = "/visit"
    ) {
        visit({ TestClient(port: port) }, cookies, answers, as: name, path: path)
    }

    /// The same, with a client `makeClient` makes (of either mode).
    static func visit(
        _ makeClient: @escaping @Sendable () -> any HTTPTestClient, _ cookies: [String: String], _ answers: Answers,
        as name: String, path: String = "/visit"
    ) {
        answers.expect()
        Thread.detachNewThread {
            let client = makeClient()
            client.cookies = cookies
            let response = try? client.send("POST", path, headers: [], body: [])
            answers.add(name, response)
        }
    }

    final class Answers: @unchecked Sendable {
        // @unchecked: under `condition`.
        private let condition = NSCondition()
        private var responses: [String: TestResponse?] = [:]
        private var expected = 0

        func expect() { condition.withLock { expected += 1 } }
        func add(_ name: String, _ response: TestResponse?) {
            condition.withLock {
                responses[name] = response
                condition.broadcast()
            }
        }
        var received: [String: TestResponse?] { condition.withLock { responses } }
        func waitForAll() -> [String: TestResponse?] {
            condition.lock()
            defer { condition.unlock() }
            while responses.count < expected { condition.wait() }
            return responses
        }
    }

    @Test(arguments: TestMode.allCases) func answersWaitForTheirCommitAndTheSessionsNextRequestSeesIt(
        mode: TestMode
    ) throws {
        let (server, backend, _) = try Self.start(mode, queue: 64)
        defer { _ = server.stop() }
        let client = server.client()
        #expect(try client.send("POST", "/visit", headers: [], body: []).text == "1")
        let session = client.cookies
        backend.hold()
        let answers = Answers()
        // The session's write reaches the writer and is held there.
        Self.visit(server.client, session, answers, as: "a")
        backend.waitUntilEntered(2)
        // The same session again: it waits for the first write (it would build on it).
        Self.visit(server.client, session, answers, as: "a-again")
        // Another session's write waits in the queue.
        Self.visit(server.client, [:], answers, as: "b")
        // The server's only thread is free meanwhile (in process, the test's own thread answers).
        #expect(try server.client().get("/healthz").text == "ok")
        #expect(answers.received["a"] == nil, "answered before its write was durable")
        backend.release()
        let all = answers.waitForAll()
        #expect(all["a"]??.text == "2")
        #expect(all["a-again"]??.text == "3", "the session's next request did not see the first's write")
        #expect(all["b"]??.text == "1")
        #expect(try client.send("POST", "/visit", headers: [], body: []).text == "4")
    }

    @Test func aFullQueueAnswers503WithRetryAfterAndChangesNothing() throws {
        let (live, backend, registry) = try Self.start(queue: 1)
        defer { _ = live.stop() }
        backend.hold()
        let answers = Answers()
        Self.visit(live.port, [:], answers, as: "a")
        backend.waitUntilEntered(1)
        Self.visit(live.port, [:], answers, as: "b")
        while registry.writer?.queued != 1 { usleep(1000) }
        // The writer holds one write and one waits: a third is refused at once, changing nothing.
        let full = try TestClient(port: live.port).send("POST", "/visit")
        #expect(full.status == 503)
        #expect(full.headers["Retry-After"] == "1")
        #expect(full.headers["Set-Cookie"] == nil)
        backend.release()
        let all = answers.waitForAll()
        #expect(all["a"]??.status == 200)
        #expect(all["b"]??.status == 200)
        #expect(try backend.count() == 2)
    }

    @Test func aDeferredAnswerOfAWaitingRequestReachesItsClient() throws {
        let (live, backend, _) = try Self.start(queue: 64)
        defer { _ = live.stop() }
        let client = live.client()
        #expect(try client.send("POST", "/visit").text == "1")
        let session = client.cookies
        backend.hold()
        let answers = Answers()
        Self.visit(live.port, session, answers, as: "a")
        backend.waitUntilEntered(2)
        // Both wait for "a"; then each hands its answer to another thread, one after its own commit.
        Self.visit(live.port, session, answers, as: "writing", path: "/later-writing")
        Self.visit(live.port, session, answers, as: "reading", path: "/later")
        usleep(20_000)
        backend.release()
        let all = answers.waitForAll()
        #expect(all["a"]??.text == "2")
        let later = [all["writing"]??.text, all["reading"]??.text]
        // Whichever ran first, each saw every write committed before it.
        #expect(later == ["later 3", "later 3"] || later == ["later 3", "later 2"], "\(later)")
        #expect(try client.send("POST", "/visit").text == "4")
    }
}
