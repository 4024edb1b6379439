import AppShell
import AppShellJSON
import Testing

final class HomeScreen: ViewController, RestorableScreen {
    init() { super.init(name: "home") }
}

extension NoteScreen: RestorableScreen {}

/// `ScreenRegistry`: the screens a snapshot names, made by name from the app's screen types.
@Suite struct ScreenRegistryTests {
    static let registry = ScreenRegistry([HomeScreen.self, NoteScreen.self, ProbeScreen.self])

    static func snapshot(root: String, stack: [String] = [], presented: String? = nil) -> ShellSnapshot {
        ShellSnapshot(
            root: root, stack: stack, presented: presented, coordinators: [:], lifecycle: [], version: 1, extra: [:])
    }

    @Test func itKnowsTheRestorableTypesByTheirScreensNames() {
        #expect(Self.registry.names == ["home", "note"])
        #expect(Self.registry.make("note") is NoteScreen)
        #expect(Self.registry.make("probe") == nil)
    }

    @Test func aStackComesBackAsANavigationControllerWithTheModalScreen() throws {
        let restored = try #require(
            Self.registry.restore(Self.snapshot(root: "home", stack: ["home", "note", "note"], presented: "note")))
        let navigation = try #require(restored.child as? NavigationController)
        #expect(navigation.viewControllers.map(\.name) == ["home", "note", "note"])
        #expect(navigation.viewControllers[0] is HomeScreen)
        #expect(restored.presented is NoteScreen)
    }

    @Test func aChildWithoutAStackComesBackAlone() throws {
        let restored = try #require(Self.registry.restore(Self.snapshot(root: "note")))
        #expect(restored.child is NoteScreen)
        #expect(restored.presented == nil)
    }

    @Test func aNameNoTypeHasRestoresNothing() {
        #expect(Self.registry.restore(Self.snapshot(root: "gone")) == nil)
        #expect(Self.registry.restore(Self.snapshot(root: "home", stack: ["home", "gone"])) == nil)
        #expect(Self.registry.restore(Self.snapshot(root: "home", presented: "gone")) == nil)
        #expect(Self.registry.restore(Self.snapshot(root: "note", stack: ["home"])) == nil)
    }
}
