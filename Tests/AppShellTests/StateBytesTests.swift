import AppShellJSON
import AppShellSessions
import Testing

@testable import AppShell

/// A screen whose actions and `view` the test sets.
private final class StateScreen: ViewController {
    var offered: [String] = []
    var view: JSON?

    init(_ name: String, offering offered: [String] = [], view: JSON? = nil) {
        self.offered = offered
        self.view = view
        super.init(name: name)
    }

    override var actions: [String] { offered }
    override func state() -> JSON? { view }
}

/// An app coordinator with nothing to do.
private final class StateCoordinator: Coordinator, ApplicationCoordinator {
    func advance(now: Int64) {}
    var nextDeadline: Int64? { nil }
    func launch(_ action: ActionRequest) throws(ActionError) {}
    var extraSnapshot: JSON { .null }
}

/// `stateBytes(defaults:)` writes the state without building its tree: every action's answer and
/// every changed read. Its bytes are those of `state(defaults:).serialized` in every shape the
/// state takes, and the lifecycle log's kept bytes are those of its records' JSON.
@Suite struct StateBytesTests {
    /// The written state and the serialized tree, and the log's bytes and its records' JSON.
    private static func expectSameBytes(_ app: LiveApp, _ defaults: DefaultsStore) {
        let written = app.stateBytes(defaults: defaults)
        let tree = app.state(defaults: defaults).serialized
        #expect(
            written == tree,
            "\(String(decoding: written, as: UTF8.self)) != \(String(decoding: tree, as: UTF8.self))")
        var log: [UInt8] = []
        app.root.log.write(into: &log)
        #expect(log == JSON.array(app.root.log.json).serialized)
        #expect(log.count == app.root.log.byteCount)
    }

    @Test func theWrittenStateIsTheSerializedTreeInEveryShape() {
        let defaults = DefaultsStore(values: [
            "flag": .bool(true), "name": .string("a <b> & \"c\"\n"), "count": .integer(-3), "ratio": .double(0.5),
            "bytes": .data([1, 2, 255]), "list": .array([.integer(1), .string("x")]),
            "nested": .dictionary(["z": .bool(false), "a": .array([])]),
        ])
        let root = RootController(initial: StateScreen("splash"), defaults: defaults)
        let coordinator = StateCoordinator(name: "app")
        let child = Coordinator(name: "main \"flow\"")
        coordinator.addChild(child)
        child.addChild(Coordinator(name: "list"))
        coordinator.addChild(Coordinator(name: "second"))
        let app = LiveApp(root: root, coordinator: coordinator)
        // At the start: no transition yet, no navigation, the launch action added.
        Self.expectSameBytes(app, defaults)
        Self.expectSameBytes(app, DefaultsStore())

        let navigation = NavigationController(
            rootViewController: StateScreen("main", offering: ["showList", "launch", "logout"]))
        root.transition(to: navigation, animated: true)
        Self.expectSameBytes(app, defaults)

        navigation.push(
            StateScreen("list", offering: ["pop"], view: ["items": [1, 2], "message": "x & y"]), animated: false)
        Self.expectSameBytes(app, defaults)

        root.present(StateScreen("modal <1>", view: "a string"), animated: true)
        Self.expectSameBytes(app, defaults)
        root.dismiss(animated: false)
        Self.expectSameBytes(app, defaults)

        // Past the log's capacity: the oldest records' bytes are dropped with their commas.
        for round in 0..<30 {
            navigation.push(StateScreen("pushed\(round % 3)", view: .integer(round)), animated: round % 2 == 0)
            Self.expectSameBytes(app, defaults)
            navigation.pop(animated: true)
            Self.expectSameBytes(app, defaults)
        }
        #expect(root.log.records.count == LifecycleLog.capacity)
        #expect(root.version > 60)
    }

    @Test func aRestoredLogWritesWhatItsRecordsWrite() {
        let records: [LifecycleRecord] = (0..<75).map { index in
            index % 4 == 0 ? .completion(.push) : .screen("s\(index % 6)", .viewDidAppear)
        }
        for count in [0, 1, 2, 50, 75] {
            let log = LifecycleLog(records: Array(records.prefix(count)))
            var bytes: [UInt8] = []
            log.write(into: &bytes)
            #expect(bytes == JSON.array(log.records.map(\.json)).serialized)
            #expect(bytes.count == log.byteCount)
        }
    }

    /// The tree the state and the snapshot write is made again whenever a coordinator joins or
    /// leaves it, however deep, and only then.
    @Test func theCoordinatorTreeFollowsCoordinatorsJoiningAndLeaving() throws {
        let root = RootController(initial: StateScreen("splash"), defaults: DefaultsStore())
        let coordinator = StateCoordinator(name: "app")
        let app = LiveApp(root: root, coordinator: coordinator)
        func expectCurrent() throws {
            let tree = app.coordinatorTree
            #expect(tree.json == coordinator.tree)
            #expect(tree.bytes == coordinator.tree.serialized)
            Self.expectSameBytes(app, DefaultsStore())
            let stored = try JSON(parsing: app.snapshot.kept.bytes)
            #expect(stored["coordinators"] == coordinator.tree)
        }
        try expectCurrent()
        let first = app.coordinatorTree
        // Unchanged: the same tree, not made again.
        #expect(
            app.coordinatorTree.bytes.withUnsafeBufferPointer { $0.baseAddress }
                == first.bytes.withUnsafeBufferPointer { $0.baseAddress })
        let main = Coordinator(name: "main")
        coordinator.addChild(main)
        try expectCurrent()
        let list = Coordinator(name: "list")
        main.addChild(list)
        try expectCurrent()
        let other = Coordinator(name: "other")
        coordinator.addChild(other)
        // A grandchild moved under another child.
        other.addChild(list)
        try expectCurrent()
        #expect(main.children.isEmpty)
        list.finish()
        try expectCurrent()
        main.removeChild(Coordinator(name: "not a child"))
        try expectCurrent()
        coordinator.removeChild(main)
        try expectCurrent()
        #expect(coordinator.tree == ["name": "app", "children": [["name": "other", "children": []]]])
    }
}
