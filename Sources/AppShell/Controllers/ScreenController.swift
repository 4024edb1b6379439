import AppShellJSON
import AppShellSessions

/// A container that screens move into and out of: the root controller or a navigation controller.
public protocol ContainerController: AnyObject {}

/// A screen's controller (formerly `PageRenderer`): UIKit's view-controller lifecycle, an HTML
/// render and a JSON state.
///
/// The controllers call the lifecycle methods in UIKit's order (DESIGN.md's table) and record each
/// call in the session's lifecycle log; a screen overrides the ones it needs. A screen reports what
/// the user asked for to its coordinator (`actionHandler`) and never navigates by itself.
public protocol ScreenController: AnyObject {
    /// The screen's name in the JSON API and in URLs: `splash`, `login`, `main`, …
    var name: String { get }
    /// The actions the screen offers; any other (except `launch`) is refused with 409.
    var actions: [String] { get }
    /// The screen's title, for the page's `<title>`.
    var title: String { get }
    /// Where the screen reaches its session: the root controller and the defaults. Set by the
    /// controller that shows the screen.
    var context: ScreenContext? { get set }
    /// Whom the screen reports actions to (its coordinator); not retained.
    var actionHandler: (any ScreenActionHandler)? { get set }

    /// Called once, before the screen first appears.
    func viewDidLoad()
    /// The screen is about to appear.
    func viewWillAppear(_ animated: Bool)
    /// The screen appeared.
    func viewDidAppear(_ animated: Bool)
    /// The screen is about to disappear.
    func viewWillDisappear(_ animated: Bool)
    /// The screen disappeared.
    func viewDidDisappear(_ animated: Bool)
    /// The screen is about to move to `parent` (`nil`: it is about to be removed).
    func willMove(toParent parent: (any ContainerController)?)
    /// The screen moved to `parent`.
    func didMove(toParent parent: (any ContainerController)?)

    /// The screen's HTML: a fragment placed inside the app's page layout.
    func renderHTML() -> String
    /// What the screen adds to `GET /api/state` (e.g. a message), or `nil`.
    func state() -> JSON?
    /// Hands `action`, one of `actions`, to whoever handles the screen's actions (its coordinator).
    func perform(_ action: ScreenAction) throws(ActionError)
}

/// The actions a screen can report, with their parameters from the request.
public struct ScreenAction: Sendable {
    /// The action's name, e.g. `login` or `showList`.
    public let name: String
    /// Everything else the request sent, e.g. `username` and `password`.
    public let parameters: [String: JSON]
    /// The client's IP address (for rate limits): `Request.clientAddress`, the forwarded one
    /// behind a trusted proxy.
    public let clientAddress: String

    /// An action with its parameters.
    public init(name: String, parameters: [String: JSON] = [:], clientAddress: String = "") {
        self.name = name
        self.parameters = parameters
        self.clientAddress = clientAddress
    }

    /// The string parameter `key`, or `nil`.
    public func string(_ key: String) -> String? { parameters[key]?.stringValue }
}

/// What a screen's coordinator implements to receive the screen's actions (seed 003).
public protocol ScreenActionHandler: AnyObject {
    /// Handles `action` reported by `screen`. Throw an `ActionError` to refuse it (nothing changes).
    func screen(_ screen: any ScreenController, didRequest action: ScreenAction) throws(ActionError)
}

/// Why an action was refused, with the HTTP status the API answers.
public struct ActionError: Error, Sendable, Equatable {
    /// The status: 400 for a malformed action, 401 for wrong credentials, 409 for an action the
    /// screen does not offer, 429 when rate-limited.
    public let status: Int
    /// What was wrong, in words for the user.
    public let message: String
    /// When to try again (`Retry-After`, for 429 and 503), in seconds.
    public let retryAfterSeconds: Int?

    /// An error answering `status` with `message` (and `Retry-After` when `retryAfterSeconds` is given).
    public init(status: Int, _ message: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// A screen with UIKit's defaults: subclass it and override what you need, as with
/// `UIViewController`.
open class ViewController: ScreenController {
    /// The screen's name.
    public let name: String
    /// Where the screen reaches its session.
    public var context: ScreenContext?
    /// Whom the screen reports actions to.
    public weak var actionHandler: (any ScreenActionHandler)?
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

    /// No actions by default.
    open var actions: [String] { [] }
    /// The `body`'s `.navigationTitle(_:)` for a screen that is a `View`, else the name,
    /// capitalised, by default.
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
    /// Does nothing by default.
    open func viewDidLoad() {}
    /// Does nothing by default.
    open func viewWillAppear(_ animated: Bool) {}
    /// Does nothing by default.
    open func viewDidAppear(_ animated: Bool) {}
    /// Does nothing by default.
    open func viewWillDisappear(_ animated: Bool) {}
    /// Does nothing by default.
    open func viewDidDisappear(_ animated: Bool) {}
    /// Does nothing by default.
    open func willMove(toParent parent: (any ContainerController)?) {}
    /// Does nothing by default.
    open func didMove(toParent parent: (any ContainerController)?) {}
    /// The `body`'s HTML for a screen that is a `View`, else a heading with the screen's name,
    /// by default.
    open func renderHTML() -> String { renderedView?.view.html(of: self) ?? "<h1>\(name)</h1>" }
    /// The `body` as JSON for a screen that is a `View` (`ScreenView`), else nothing, by default.
    /// (A screen that is a `View` describes itself by its `body`: the state answer writes that,
    /// whatever this returns.)
    open func state() -> JSON? { renderedView.flatMap { try? JSON(parsing: $0.jsonBytes(of: self)) } }

    /// Reports `action` to the coordinator (seed 003: the screen only reports, the coordinator
    /// decides what happens).
    public func report(_ action: ScreenAction) throws(ActionError) { try perform(action) }

    /// Gives `action` to `actionHandler` (409 when there is none); `Screen` gives it typed.
    open func perform(_ action: ScreenAction) throws(ActionError) {
        guard let actionHandler else { throw ActionError(status: 409, "\(name) has nobody to handle \(action.name)") }
        try actionHandler.screen(self, didRequest: action)
    }
}
