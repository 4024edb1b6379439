import AppShell
import AppShellConcurrency
import AppShellHTTP
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The awaiting app's one screen: `fetch` awaits the slow service, `rotate` rotates the session's
/// id (as a login or logout elsewhere does).
enum AwaitAction: String, ScreenActions {
    case fetch, rotate
}

final class AwaitScreen: Screen<AwaitAction>, RestorableScreen {
    init() { super.init(name: "await") }
}

/// How the fetches' tasks ended, and whether their second half ran.
final class WorkLog: Sendable {
    let finished = Locked(0)
    let cancelled = Locked(0)
    let applied = Locked(0)
}

/// `fetch` awaits `GET /answer` of the service on `port`, then keeps its answer as `fetched`.
final class AwaitCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] { [AwaitScreen.self] }

    init(root: RootController, port: Int, log: WorkLog) {
        self.root = root
        super.init(name: "await")
        handle(AwaitAction.self) { [unowned self] action, _ throws(ActionError) in
            switch action {
            case .fetch:
                try self.root.awaiting { () async throws -> String in
                    do {
                        let text = try await SlowService.fetch(port: port)
                        log.finished.withLock { $0 += 1 }
                        return text
                    } catch {
                        log.cancelled.withLock { $0 += 1 }
                        throw error
                    }
                } then: { root, text throws(ActionError) in
                    log.applied.withLock { $0 += 1 }
                    root.defaults.set(text, forKey: "fetched")
                }
            case .rotate:
                self.root.rotateSessionID()
            }
        }
    }
}

/// An app of one screen whose action awaits a slow local service.
struct AwaitApp: ShellApplication {
    let port: Int
    let log = WorkLog()
    func makeFirstScreen() -> ViewController { AwaitScreen() }
    func makeCoordinator(root: RootController) -> AwaitCoordinator {
        AwaitCoordinator(root: root, port: port, log: log)
    }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// Actions that await: the request waits suspended while the work awaits a slow local service
/// off the session's lock; the change is applied when it resumes, or not at all when the session's
/// id changes meanwhile, the client goes away, the limit is reached or the shutdown timeout ends.
@Suite struct AsyncActionTests {
    /// The app under test on a live server, its shell, the slow service, and a client whose
    /// session exists (its state read once).
    struct Setup {
        let service: SlowService
        let app: AwaitApp
        let shell: Shell
        let server: TestServer
        let client: TestClient

        init(maxAsyncActions: Int = 8) throws {
            service = try SlowService()
            app = AwaitApp(port: service.port)
            let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
            shell = Shell(
                application: app, registry: registry, cookie: SessionCookie(baseName: "await_session", secure: false),
                chrome: PageChrome(name: "Await"), maxAsyncActions: maxAsyncActions)
            var router = Router()
            shell.install(into: &router, pagePaths: [])
            server = try TestServer(.live, responder: router)
            client = try #require(server.client() as? TestClient)
            #expect(try client.get("/api/state").status == 200)
        }

        /// Another client of the same session (another tab).
        func sameSession() throws -> TestClient {
            let other = try #require(server.client() as? TestClient)
            other.cookies = client.cookies
            return other
        }

        /// Sends `fetch` from `client` on a thread of its own; the answer comes through the result.
        func fetchInBackground(_ client: TestClient) -> Answer {
            let answer = Answer()
            Thread.detachNewThread {
                let response = try? client.postJSON("/api/actions", #"{"action": "fetch"}"#)
                answer.response.withLock { $0 = response }
                answer.done.signal()
            }
            return answer
        }

        func stop() {
            server.stop()
            service.stop()
        }
    }

    /// A request's answer, given on another thread.
    final class Answer: Sendable {
        let response = Locked<TestResponse?>(nil)
        let done = DispatchSemaphore(value: 0)

        /// Waits for the answer (60 s at most: a bound a working server never nears).
        func wait() -> TestResponse? {
            _ = done.wait(timeout: .now() + 60)
            return response.withLock { $0 }
        }
    }

    @Test func theAnswerComesWhenTheWorkResumesWithItsChangeApplied() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let answer = setup.fetchInBackground(setup.client)
        #expect(eventually { setup.service.waitingCount == 1 })
        // The session's lock is free while the action waits: another tab reads the state.
        let other = try setup.sameSession()
        let meanwhile = try other.get("/api/state")
        #expect(meanwhile.status == 200)
        #expect(meanwhile.json["defaults"]?["fetched"] == nil)
        #expect(setup.app.log.applied.withLock { $0 } == 0)

        setup.service.answer(with: "sunny")
        let response = try #require(answer.wait())
        #expect(response.status == 200)
        #expect(response.json["defaults"]?["fetched"]?.stringValue == "sunny")
        #expect(setup.app.log.finished.withLock { $0 } == 1)
        #expect(setup.app.log.applied.withLock { $0 } == 1)
        #expect(eventually { setup.shell.runningAsyncActions == 0 })
    }

    @Test func aRotatedIdCancelsTheTaskAt409WithNothingApplied() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let answer = setup.fetchInBackground(setup.client)
        #expect(eventually { setup.service.waitingCount == 1 })

        // A login or logout in another tab rotates the id: the waiting action is answered at once.
        let other = try setup.sameSession()
        #expect(try other.postJSON("/api/actions", #"{"action": "rotate"}"#).status == 200)
        let response = try #require(answer.wait())
        #expect(response.status == 409)
        #expect(response.json["error"]?.stringValue?.contains("this session changed") == true)
        // Its task was cancelled: its request to the service was given up, before any answer.
        #expect(eventually { setup.app.log.cancelled.withLock { $0 } == 1 })
        #expect(eventually { setup.service.abandoned.withLock { $0 } == 1 })
        #expect(eventually { setup.shell.runningAsyncActions == 0 })
        #expect(setup.app.log.applied.withLock { $0 } == 0)
        #expect(try other.get("/api/state").json["defaults"]?["fetched"] == nil)
    }

    @Test func aClientThatGoesAwayCancelsTheTaskWithNothingApplied() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let cookie = try #require(CookieHeader.of(setup.client))
        let body = #"{"action": "fetch"}"#
        do {
            let connection = try RawConnection(port: setup.server.server.port)
            try connection.send(
                "POST /api/actions HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            #expect(eventually { setup.service.waitingCount == 1 })
        }  // the client closes its connection
        #expect(eventually { setup.app.log.cancelled.withLock { $0 } == 1 })
        #expect(eventually { setup.service.abandoned.withLock { $0 } == 1 })
        #expect(eventually { setup.shell.runningAsyncActions == 0 })
        #expect(setup.app.log.applied.withLock { $0 } == 0)
        #expect(try setup.client.get("/api/state").json["defaults"]?["fetched"] == nil)
    }

    @Test func pastTheLimitTheActionIsRefused503WithRetryAfterAndNothingChanged() throws {
        let setup = try Setup(maxAsyncActions: 1)
        defer { setup.stop() }
        let answer = setup.fetchInBackground(setup.client)
        #expect(eventually { setup.service.waitingCount == 1 })

        // Another session's fetch finds the one slot taken.
        let second = try #require(setup.server.client() as? TestClient)
        let before = try second.get("/api/state").json["version"]?.integerValue
        let refused = try second.postJSON("/api/actions", #"{"action": "fetch"}"#)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(refused.json["version"]?.integerValue == before)
        #expect(setup.service.waitingCount == 1)

        setup.service.answer(with: "first")
        #expect(answer.wait()?.status == 200)
        #expect(eventually { setup.shell.runningAsyncActions == 0 })
        // The slot is free again.
        let again = setup.fetchInBackground(second)
        #expect(eventually { setup.service.waitingCount == 1 })
        setup.service.answer(with: "second")
        #expect(again.wait()?.json["defaults"]?["fetched"]?.stringValue == "second")
    }

    @Test func aShutdownLetsARunningActionFinishWithinItsTimeout() throws {
        let setup = try Setup()
        defer { setup.service.stop() }
        let answer = setup.fetchInBackground(setup.client)
        #expect(eventually { setup.service.waitingCount == 1 })

        let stopped = Answer()
        let finished = Locked(false)
        Thread.detachNewThread {
            finished.withLock { $0 = setup.server.stop(timeoutSeconds: 60) }
            stopped.done.signal()
        }
        // The shutdown began: new connections are closed as soon as they are accepted.
        #expect(eventually { (try? setup.server.client().get("/healthz")) == nil })
        setup.service.answer(with: "last")
        let response = try #require(answer.wait())
        #expect(response.status == 200)
        #expect(response.json["defaults"]?["fetched"]?.stringValue == "last")
        _ = stopped.wait()
        #expect(finished.withLock { $0 })
        #expect(setup.app.log.applied.withLock { $0 } == 1)
    }

    @Test func aShutdownTimeoutCancelsTheRunningActionAt503() throws {
        let setup = try Setup()
        defer { setup.service.stop() }
        let answer = setup.fetchInBackground(setup.client)
        #expect(eventually { setup.service.waitingCount == 1 })

        #expect(setup.server.stop(timeoutSeconds: 0) == false)
        let response = try #require(answer.wait())
        #expect(response.status == 503)
        #expect(response.headers["Retry-After"] != nil)
        #expect(eventually { setup.app.log.cancelled.withLock { $0 } == 1 })
        #expect(eventually { setup.service.abandoned.withLock { $0 } == 1 })
        #expect(eventually { setup.shell.runningAsyncActions == 0 })
        #expect(setup.app.log.applied.withLock { $0 } == 0)
    }
}

/// The `Cookie` field a client sends.
enum CookieHeader {
    static func of(_ client: TestClient) -> String? {
        client.cookies.isEmpty ? nil : client.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }
}
