import AppShellJSON
import AppShellSessions
import Testing

@testable import AppShell

/// A tab, stored by its raw value.
enum Tab: String, StorableValue { case inbox, archive }

/// A screen with a property of each kind the wrappers keep.
final class StoredScreen: ViewController, RestorableScreen {
    @AppStorage("isLogin") var isLogin = false
    @AppStorage("visits") var visits = 0
    @AppStorage("username") var username: String?
    @AppStorage("tab") var tab = Tab.inbox
    @AppStorage("tags") var tags: [String] = []
    @SceneStorage("id") var noteID = 0
    @SceneStorage("next") var next: String?

    init() { super.init(name: "stored") }
}

/// A screen with a property kept in the user's store.
final class SettingsScreen: ViewController, RestorableScreen {
    @UserStorage("theme") var theme = "light"
    @UserStorage("fontSize") var fontSize: Int?

    init() { super.init(name: "settings") }
}

/// `@AppStorage` reads and writes the session's defaults; `@SceneStorage` keeps a value with its
/// screen and makes every change a new version.
@Suite struct StorageWrapperTests {
    @Test func appStorageReadsAndWritesTheSessionsDefaults() {
        let defaults = DefaultsStore()
        let screen = StoredScreen()
        // Not shown yet: the defaults, and writes go nowhere.
        screen.visits = 3
        #expect(screen.visits == 0 && defaults.value(forKey: "visits") == nil)
        let root = RootController(initial: screen, defaults: defaults)
        defer { withExtendedLifetime(root) {} }
        #expect(!screen.isLogin && screen.username == nil && screen.tab == .inbox && screen.tags == [])

        screen.isLogin = true
        screen.visits += 2
        screen.username = "demo"
        screen.tab = .archive
        screen.tags = ["a", "b"]
        #expect(defaults.bool(forKey: "isLogin") && defaults.integer(forKey: "visits") == 2)
        #expect(defaults.string(forKey: "username") == "demo")
        #expect(defaults.value(forKey: "tab") == .string("archive"))
        #expect(defaults.value(forKey: "tags") == .array([.string("a"), .string("b")]))

        // Written by other code, read through the wrapper; nil takes the key away; a value of
        // another kind reads as the default.
        defaults.set(7, forKey: "visits")
        #expect(screen.visits == 7)
        screen.username = nil
        #expect(defaults.value(forKey: "username") == nil)
        defaults.set("many", forKey: "visits")
        #expect(screen.visits == 0)
    }

    @Test func sceneStorageIsANewVersionAndComesBackWithTheSnapshotsStates() {
        let screen = StoredScreen()
        let root = RootController(initial: screen, defaults: DefaultsStore())
        let version = root.version
        screen.noteID = 4
        #expect(root.version == version + 1)
        // The same value again is no change.
        screen.noteID = 4
        #expect(root.version == version + 1)
        screen.next = "/main/list"
        #expect(root.version == version + 2)

        // What the snapshot keeps, by the screen's place; a screen made again from its name takes
        // the values back.
        let states = ScreenPlace.states(of: root)
        #expect(states == ["root": ["id": 4, "next": "/main/list"]])
        let again = StoredScreen()
        let rebuilt = RootController(initial: again, defaults: DefaultsStore())
        #expect(again.noteID == 0 && again.next == nil)
        ScreenPlace.restore(states, in: rebuilt)
        #expect(again.noteID == 4 && again.next == "/main/list")
        screen.next = nil
        #expect(screen.next == nil)
    }

    @Test func userStorageIsSharedByEverySessionOfTheUser() throws {
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        /// Runs `body` on a screen shown in the session `cookie` names (a new one when `nil`),
        /// logged in as `user`; returns the session's cookie.
        func session(_ cookie: String?, as user: String?, _ body: (SettingsScreen) -> Void) throws -> String {
            let context = try registry.enterSession(presentedID: cookie) { context in
                context.user = user
                let screen = SettingsScreen()
                let root = RootController(initial: screen, defaults: context.defaults)
                root.session = context
                body(screen)
                root.session = nil
            }
            return context.cookieValue
        }
        let phone = try session(nil, as: "ann") { screen in
            #expect(screen.theme == "light" && screen.fontSize == nil)
            screen.theme = "dark"
            screen.fontSize = 14
        }
        // Another session of the user reads it; one of another user, or logged out, does not.
        _ = try session(nil, as: "ann") { screen in #expect(screen.theme == "dark" && screen.fontSize == 14) }
        _ = try session(nil, as: "bob") { screen in #expect(screen.theme == "light") }
        _ = try session(nil, as: nil) { screen in
            screen.theme = "ignored"
            #expect(screen.theme == "light")
        }
        // nil takes the key away, for every session of the user.
        _ = try session(phone, as: "ann") { screen in screen.fontSize = nil }
        _ = try session(nil, as: "ann") { screen in #expect(screen.fontSize == nil && screen.theme == "dark") }
        #expect(try registry.backend.userStore(of: "ann").values == ["theme": .string("dark")])
    }
}
