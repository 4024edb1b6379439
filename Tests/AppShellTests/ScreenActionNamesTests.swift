import AppShell
import Testing

/// A second enum of actions, besides the note's, sharing a case name with it.
private enum DrawerAction: String, ScreenActions {
    case open, close, pin
}

private final class DrawerScreen: Screen<DrawerAction> {
    init() { super.init(name: "drawer") }
}

/// `Screen.actions` is made once per enum type and kept: each screen type still lists its own
/// enum's cases, in their order, every time it is asked.
@Suite struct ScreenActionNamesTests {
    @Test func eachEnumKeepsItsOwnNames() {
        for _ in 0..<3 {
            #expect(DrawerScreen().actions == ["open", "close", "pin"])
            #expect(NoteScreen().actions == ["save", "close"])
        }
        let drawer = DrawerScreen()
        #expect(drawer.actions == drawer.actions)
        #expect(DrawerScreen.offeredActions.map(\.name) == drawer.actions)
    }
}
