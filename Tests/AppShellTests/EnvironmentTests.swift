import AppShell
import AppShellHTTP
import AppShellSessions
import AppShellTesting
import Synchronization
import Testing

// A small "Habits" app, as the user who asked for the environment built it: a habit screen made
// with the habit's number, reading the clock and the app's streak goal from the environment.

/// The key of the app's streak goal.
private struct StreakGoalKey: EnvironmentKey {
    static let defaultValue = 7
}

extension EnvironmentValues {
    /// How many days in a row make a habit: the app's setting.
    var streakGoal: Int {
        get { self[StreakGoalKey.self] }
        set { self[StreakGoalKey.self] = newValue }
    }
}

enum StreakListAction: ScreenActions {
    case open(id: Int)
    static let allCases: [StreakListAction] = [.open(id: 1)]
}

enum StreakAction: String, ScreenActions { case markDone }

final class StreakListScreen: Screen<StreakListAction>, RestorableScreen, View {
    init() { super.init(name: "habits") }
    var body: some View { Text("Habits") }
}

/// A screen made with its habit's number, restorable all the same.
final class StreakScreen: Screen<StreakAction>, RestorableScreen, View {
    @SceneStorage("id") var habitID = 0
    @AppStorage("doneAt") var doneAt = 0
    @Environment(\.now) var now
    @Environment(\.streakGoal) var goal

    init() { super.init(name: "habit") }

    convenience init(habitID: Int) {
        self.init()
        self.habitID = habitID
    }

    var body: some View {
        Text("Habit \(habitID), goal \(goal), now \(now), done at \(doneAt)")
    }
}

/// The app coordinator: presents a habit, and records when it was done by the environment's clock.
final class StreaksCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] { [StreakListScreen.self, StreakScreen.self] }

    init(root: RootController) {
        self.root = root
        super.init(name: "habits")
        handle(StreakListAction.self) { [unowned self] action, _ in
            switch action {
            case .open(let id): self.root.present(own(StreakScreen(habitID: id)), animated: false)
            }
        }
        handle(StreakAction.self) { [unowned self] action, _ in
            switch action {
            case .markDone:
                // The coordinator reads the same environment, typed, through its root.
                let environment = self.root.environment
                self.root.defaults.set(Int(environment.now), forKey: "doneAt")
                self.root.defaults.set(environment.streakGoal, forKey: "goal")
                self.root.noteChange()
            }
        }
    }
}

/// The app, giving its streak goal at start.
struct StreaksApp: ShellApplication {
    var goal = 21
    var environmentValues: EnvironmentValues {
        var values = EnvironmentValues()
        values.streakGoal = goal
        return values
    }
    func makeFirstScreen() -> ViewController { StreakListScreen() }
    func makeCoordinator(root: RootController) -> StreaksCoordinator { StreaksCoordinator(root: root) }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
}

/// A clock the test moves by hand.
final class StreaksClock: Sendable {
    private let time = Mutex<Int64>(1_234_000)
    func read() -> Int64 { time.withLock { $0 } }
    func advance(by milliseconds: Int64) { time.withLock { $0 += milliseconds } }
}

/// The environment: the app's values given at start and the shell's clock reach a screen's
/// `@Environment` and a coordinator, typed; outside a session each key reads its default.
@Suite struct EnvironmentTests {
    static func shell(_ app: StreaksApp, clock: StreaksClock) -> Shell {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        return Shell(
            application: app, registry: registry, cookie: SessionCookie(baseName: "habits_session", secure: false),
            chrome: PageChrome(name: "Habits"), clock: { clock.read() })
    }

    static func client(_ mode: TestMode, clock: StreaksClock) throws -> any HTTPTestClient {
        var router = Router()
        shell(StreaksApp(), clock: clock).install(into: &router, pagePaths: [])
        return try TestServer(mode, responder: router).client()
    }

    @Test(arguments: TestMode.allCases)
    func aLiveSessionsScreenAndCoordinatorReadTheAppsValuesAndTheShellsClock(mode: TestMode) throws {
        let clock = StreaksClock()
        let client = try Self.client(mode, clock: clock)
        #expect(try client.postJSON("/api/actions", #"{"action": "open", "id": 3}"#).status == 200)
        // The screen, made with its number, reads the app's goal and the fake clock.
        #expect(try client.page("/").text.contains("Habit 3, goal 21, now 1234000, done at 0"))

        clock.advance(by: 5_000)
        #expect(try client.postJSON("/api/actions", #"{"action": "markDone"}"#).status == 200)
        // The coordinator read the same clock and the same goal.
        #expect(try client.page("/").text.contains("Habit 3, goal 21, now 1239000, done at 1239000"))
    }

    @Test func theShellLendsTheAppsValuesWithItsClock() {
        let clock = StreaksClock()
        let shell = Self.shell(StreaksApp(goal: 30), clock: clock)
        #expect(shell.environment.streakGoal == 30)
        #expect(shell.environment.now == 1_234_000)
        clock.advance(by: 1)
        #expect(shell.environment.now == 1_234_001)
        // An app that gives nothing: the keys' defaults, and still the shell's clock.
        let bare = Shell(
            application: ContextProbeApp(),
            registry: SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend()),
            cookie: SessionCookie(baseName: "probe_session", secure: false), chrome: PageChrome(name: "Probe"),
            clock: { clock.read() })
        #expect(bare.environment.streakGoal == 7)
        #expect(bare.environment.now == 1_234_001)
    }

    @Test func outsideASessionEachKeyReadsItsDefault() {
        let screen = StreakScreen(habitID: 2)
        let before = Shell.systemClock()
        let now = screen.now
        #expect(screen.goal == 7)
        #expect(now >= before && now <= Shell.systemClock())
        #expect(screen.habitID == 2)
        #expect(EnvironmentValues().streakGoal == 7)
    }

    @Test func aScreenMadeWithAValueComesBackAfterARestartWithIt() throws {
        let app = StreaksApp()
        let live = app.makeApp(defaults: DefaultsStore(), now: 0)
        try live.root.visibleScreen.perform(ActionRequest(name: "open", parameters: ["id": 5]))
        let restored = try #require(app.restoreApp(from: live.snapshot, defaults: DefaultsStore(), now: 0))
        let habit = try #require(restored.root.visibleScreen as? StreakScreen)
        #expect(habit.habitID == 5)
        // Shown in a root of the app: the app's value.
        #expect(habit.goal == 21)
    }
}
