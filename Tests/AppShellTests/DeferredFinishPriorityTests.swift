import AppShell
import AppShellConcurrency
import AppShellHTTP
import AppShellSessions
import AppShellTesting
import Glibc
import Testing

/// The slow-check app's one screen: `check` hands work to a low-priority pool.
enum SlowCheckAction: String, ScreenActions {
    case check
}

final class SlowCheckScreen: Screen<SlowCheckAction>, RestorableScreen {
    init() { super.init(name: "slowCheck") }
}

/// The nice values of the threads a deferred action's two halves ran on.
final class SeenPriorities: Sendable {
    let work = Locked<Int32?>(nil)
    let settle = Locked<Int32?>(nil)
    let finish = Locked<Int32?>(nil)

    /// The calling thread's nice value (Linux keeps one per thread).
    static var currentNice: Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
}

/// `check` runs its work on `pool` and records the nice values of the threads its work, its settle
/// and its finish (under the session's lock) run on.
final class SlowCheckCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] { [SlowCheckScreen.self] }

    init(root: RootController, pool: WorkerPool, seen: SeenPriorities) {
        self.root = root
        super.init(name: "slowCheck")
        handle(SlowCheckAction.self) { [unowned self] _, _ throws(ActionError) in
            let queued = self.root.finishLater(on: pool) { () -> Bool in
                seen.work.withLock { $0 = SeenPriorities.currentNice }
                return true
            } settle: { _ in
                seen.settle.withLock { $0 = SeenPriorities.currentNice }
            } then: { (root: RootController, _: Bool) throws(ActionError) in
                seen.finish.withLock { $0 = SeenPriorities.currentNice }
                root.noteChange()
            }
            guard queued else { throw ActionError(status: 503, "busy") }
        }
    }
}

/// An app of one screen whose action is finished later, as the demo's login is.
struct SlowCheckApp: ShellApplication {
    let pool: WorkerPool
    let seen = SeenPriorities()
    func makeFirstScreen() -> ViewController { SlowCheckScreen() }
    func makeCoordinator(root: RootController) -> SlowCheckCoordinator {
        SlowCheckCoordinator(root: root, pool: pool, seen: seen)
    }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// A deferred action's work runs at its pool's priority, and its finish — which holds the
/// session's and its registry shard's locks — at the normal priority.
@Suite struct DeferredFinishPriorityTests {
    /// Before: the finish ran on the pool's thread, after the work, so with a `SCHED_IDLE` pool
    /// (the demo's password checks then) it took the session's and the shard's locks as
    /// `SCHED_IDLE`; preempted there, it made other sessions' requests wait.
    @Test(arguments: TestMode.allCases) func theFinishRunsAtNormalPriorityAfterALowPriorityCheck(mode: TestMode) throws
    {
        #expect(SeenPriorities.currentNice == 0)
        let pool = WorkerPool(threads: 1, queueLimit: 4, name: "appshell-test-checks", nice: 19)
        defer { pool.stop() }
        let app = SlowCheckApp(pool: pool)
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        let shell = Shell(
            application: app, registry: registry, cookie: SessionCookie(baseName: "check_session", secure: false),
            chrome: PageChrome(name: "Check"))
        var router = Router()
        shell.install(into: &router, pagePaths: [])
        let server = try TestServer(mode, responder: router)
        let client = server.client()
        let before = try #require(try client.get("/api/state").json["version"]?.integerValue)
        let answer = try client.postJSON("/api/actions", #"{"action": "check"}"#)
        #expect(answer.status == 200)
        #expect((answer.json["version"]?.integerValue ?? 0) > before)
        #expect(app.seen.work.withLock { $0 } == 19)
        #expect(app.seen.settle.withLock { $0 } == 0)
        #expect(app.seen.finish.withLock { $0 } == 0)
    }
}
