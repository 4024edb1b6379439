import AppShellJSON
import AppShellSessions

/// A container that screens move into and out of: the root controller or a navigation controller.
public protocol ContainerController: AnyObject {}

/// What a container shows, as `UIViewController`: a name, UIKit's lifecycle, an HTML render and
/// a JSON state. The root controller shows one as its child and one presented over it; a
/// `NavigationController` is one, holding a stack of them.
///
/// Which to subclass:
/// - `Screen<Action>` for a screen that offers actions (nearly every screen): its `ScreenActions`
///   enum types them, and its coordinator handles them.
/// - `ViewController` itself for a screen that offers none (a splash).
///
/// The controllers call the lifecycle methods in UIKit's order (the Navigation and lifecycle
/// article's table) and record each call in the session's lifecycle log; a screen overrides the
/// ones it needs, and reports what the user asked for to its coordinator: it never navigates by
/// itself.
open class ViewController {
    /// The screen's name in the JSON API and in URLs: `splash`, `login`, `main`, …
    public let name: String
    /// Where the screen reaches its session: the root controller and the defaults. Set by the
    /// controller that shows the screen.
    public var context: ScreenContext?
    /// The values of the screen's `@SceneStorage` properties by key, as the snapshot keeps them.
    @usableFromInline var sceneValues: [String: DefaultsValue] = [:]
    /// What reads the screen's `body` (`bodyReader`), once looked up: every action asked the
    /// shared table twice (a lock and a hash each).
    var knownBodyReader: BodyReader?

    /// A screen named `name`.
    public init(name: String) { self.name = name }

    /// Keeps `value` under `key` (`nil`: none): a change is a new version of what the session
    /// shows, stored with the request (`@SceneStorage`).
    @usableFromInline func setSceneValue(_ value: DefaultsValue?, forKey key: String) {
        guard sceneValues[key] != value else { return }
        sceneValues[key] = value
        context?.root.noteChange()
    }

    /// The actions the screen offers (any other, except `launch`, is refused with 409): none by
    /// default; a `Screen`'s are its enum's cases.
    open var actions: [String] { [] }
    /// The screen's title, for the page's `<title>`: the `body`'s `.navigationTitle(_:)` for a
    /// screen that is a `View`, else the name, capitalised, by default.
    open var title: String {
        renderedView?.view.title ?? Self.capitalised(name)
    }

    /// `name` with its first letter in upper case. A name starting with an ASCII letter (as
    /// screen names do) is copied as bytes: `name.prefix(1).uppercased() + name.dropFirst()` was
    /// 1 900 instructions, a fifth of a small screen's JSON (callgrind).
    static func capitalised(_ name: String) -> String {
        guard let first = name.utf8.first, first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") else {
            return name.prefix(1).uppercased() + name.dropFirst()
        }
        var bytes = Array(name.utf8)
        bytes[0] = first - 0x20
        return String(decoding: bytes, as: UTF8.self)
    }
    /// Called once, before the screen first appears. Does nothing by default.
    open func viewDidLoad() {}
    /// The screen is about to appear. Does nothing by default.
    open func viewWillAppear(_ animated: Bool) {}
    /// The screen appeared. Does nothing by default.
    open func viewDidAppear(_ animated: Bool) {}
    /// The screen is about to disappear. Does nothing by default.
    open func viewWillDisappear(_ animated: Bool) {}
    /// The screen disappeared. Does nothing by default.
    open func viewDidDisappear(_ animated: Bool) {}
    /// The screen is about to move to `parent` (`nil`: it is about to be removed). Does nothing
    /// by default.
    open func willMove(toParent parent: (any ContainerController)?) {}
    /// The screen moved to `parent`. Does nothing by default.
    open func didMove(toParent parent: (any ContainerController)?) {}
    /// The screen's HTML, a fragment placed inside the app's page layout: the `body`'s HTML for a
    /// screen that is a `View`, else a heading with the screen's name, by default.
    open func renderHTML() -> String { renderedView?.view.html(of: self) ?? "<h1>\(name)</h1>" }
    /// What the screen adds to `GET /api/state`: the `body` as JSON for a screen that is a `View`
    /// (`ScreenView`), else nothing, by default. (A screen that is a `View` describes itself by its
    /// `body`: the state answer writes that, whatever this returns.)
    open func state() -> JSON? { renderedView.flatMap { try? JSON(parsing: $0.jsonBytes(of: self)) } }

    /// Hands `action`, one of `actions`, to whoever handles the screen's actions (its
    /// coordinator): a `Screen` gives it typed; a screen with no actions refuses it (409).
    open func perform(_ action: ActionRequest) throws(ActionError) {
        throw ActionError(status: 409, "the \(name) screen does not offer \"\(action.name)\"")
    }
}
