import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// What an app built on AppShell provides: how a session's controllers start and how they come
/// back from a snapshot. The demo app is one.
public protocol ShellApplication: Sendable {
    /// The app's screen types: the known actions and their parameters are derived from those with
    /// typed actions (`actionCatalog`), and a `ScreenRegistry` of them rebuilds the screens a
    /// snapshot names.
    var screenTypes: [any ScreenController.Type] { get }
    /// Every action name any screen of the app offers, plus `launch`; others are 400. By default,
    /// the names of `actionCatalog`.
    var knownActions: Set<String> { get }
    /// A new session's app: a root controller showing the splash, and the started app coordinator.
    func makeApp(defaults: DefaultsStore, now: Int64) -> LiveApp
    /// The session's app rebuilt from `snapshot`, or `nil` when the snapshot cannot be used (the
    /// session then starts afresh).
    func restoreApp(from snapshot: ShellSnapshot, defaults: DefaultsStore, now: Int64) -> LiveApp?
    /// The URL that shows what `shell` shows now, e.g. `/main/list`.
    func url(of shell: LiveApp) -> String
    /// Makes `shell` show what `path` names, without animation, and says whether to render it,
    /// redirect (a logged-out user asking for a logged-in page) or answer 404. `next` is the
    /// same-site path the user asked for before being sent to log in, if any.
    func open(path: String, next: String?, in shell: LiveApp) -> PageRoute
    /// A page rendered while the app was starting (the splash) asks, through its event stream, for
    /// the page URL it was opened at, `path`: show it once the app can (the demo: main's stack
    /// after the splash, or the login screen's `next`). The page was rendered before the app could
    /// show it, and a new visitor's app is not kept between its first two requests, so the URL
    /// comes back with the stream.
    func rememberTarget(_ path: String, in shell: LiveApp)
}

extension ShellApplication {
    /// No typed screens by default.
    public var screenTypes: [any ScreenController.Type] { [] }

    /// Every action of `screenTypes`, each name once (the first screen's description), then
    /// `launch` (with its `source`), which every screen accepts.
    public var actionCatalog: [ActionDescription] {
        var seen = Set<String>()
        let typed = screenTypes.compactMap { $0 as? any ActionOffering.Type }
        let all =
            typed.flatMap { $0.offeredActions } + [
                ActionDescription.launch
            ]
        return all.filter { seen.insert($0.name).inserted }
    }

    /// The names of `actionCatalog`.
    public var knownActions: Set<String> { Set(actionCatalog.map(\.name)) }

    /// Does nothing: an app without start-up routing has nothing to remember.
    public func rememberTarget(_ path: String, in shell: LiveApp) {}
}

/// What a page URL leads to.
public enum PageRoute: Equatable, Sendable {
    /// Render the visible screen.
    case show
    /// Redirect (303) to this same-site path.
    case redirect(String)
    /// No page has this path.
    case notFound
}

/// The app coordinator at the top of a session's coordinator tree.
public protocol ApplicationCoordinator: Coordinator {
    /// Runs the work that is due at `now` (milliseconds since 1970), such as finishing the splash.
    func advance(now: Int64)
    /// When `advance(now:)` next has work to do, if it has any (the splash's deadline).
    var nextDeadline: Int64? { get }
    /// Handles `launch` (from a notification), which every screen accepts.
    func launch(_ action: ScreenAction) throws(ActionError)
    /// What the app keeps in the snapshot beside the controller tree (e.g. when the splash began).
    var extraSnapshot: JSON { get }
}

/// One session's live app (formerly `ShellSession`: it is an app, not a session): its root
/// controller and its app coordinator. Kept in memory with the
/// session; rebuilt from a `ShellSnapshot` after a restart.
///
/// Used under its session's lock only: the properties every read touches are
/// `@exclusivity(unchecked)`, as are the root controller's (callgrind, README Performance).
public final class LiveApp {
    /// The root controller.
    public let root: RootController
    /// The app coordinator.
    public let coordinator: any ApplicationCoordinator
    /// The version the stored snapshot was taken at, and the snapshot.
    @exclusivity(unchecked) var stored: (version: Int, snapshot: SessionSnapshot)?
    /// The deadline already given to the scheduler.
    @exclusivity(unchecked) var scheduled: Int64?
    /// The last `GET /api/state` answer, valid while the version and the stored defaults are the
    /// same and no action ran since (an action may change what a screen shows, e.g. a message).
    @exclusivity(unchecked) var stateCache: (version: Int, values: [String: DefaultsValue], response: PreparedResponse)?
    /// The last page rendered, valid on the same terms, for the same session id (its forms carry
    /// a token made from the id) and the same URL.
    @exclusivity(unchecked) var pageCache:
        (version: Int, values: [String: DefaultsValue], id: SessionID, target: String, response: PreparedResponse)?
    /// Streams opened by the request being handled, subscribed once its changes are committed.
    @exclusivity(unchecked) var pendingStreams: [EventStream] = []
    /// How many of this app's streams are subscribed.
    private(set) var streamCount = StreamCount()
    /// Names the session's open pages in `ShellEvents`: stable across id rotations, and kept in
    /// the snapshot, so that an app rebuilt from it publishes where the pages listen. It also
    /// names the app's line of versions in event ids (`<channel>.<version>`): a new session, or
    /// one that lost its app with its memory store, has a new one.
    public private(set) var channel = SessionID.random().text

    /// A session made of `root` and `coordinator`.
    public init(root: RootController, coordinator: any ApplicationCoordinator) {
        self.root = root
        self.coordinator = coordinator
    }

    /// Whether the app still has start-up work to do (its coordinator has a deadline, such as the
    /// splash's): its pages refresh themselves without JavaScript, and the page's script passes the
    /// URL it was opened at on with its event stream (`data-starting`).
    public var isStarting: Bool { coordinator.nextDeadline != nil }

    /// The snapshot of the controller tree as it is now.
    public var snapshot: ShellSnapshot {
        ShellSnapshot(
            root: root.child.name,
            stack: root.navigation?.viewControllers.map(\.name) ?? [],
            presented: root.presented?.name,
            coordinators: coordinator.tree,
            log: root.log,
            version: root.version,
            extra: coordinator.extraSnapshot,
            channel: channel,
            transition: root.lastTransition.map { LastTransition(kind: $0.kind, animated: $0.animated) })
    }

    /// Takes over the channel of the app it was rebuilt from, and the count of that channel's
    /// streams when it has any (`ShellEvents.streamCount(of:)`).
    func adopt(channel: String, streamCount: StreamCount?) {
        self.channel = channel
        if let streamCount { self.streamCount = streamCount }
    }
}
