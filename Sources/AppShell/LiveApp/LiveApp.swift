import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// One session's live app: its root controller and its app coordinator, what the session shows.
/// Kept in memory with the session; rebuilt from a `ShellSnapshot` after a restart.
///
/// Used under its session's lock only: the properties every read touches are
/// `@exclusivity(unchecked)`, as are the root controller's (callgrind, the Performance article).
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
    @exclusivity(unchecked) var stateCache:
        (version: Int, values: [String: DefaultsValue], userVersion: Int64?, response: PreparedResponse)?
    {
        didSet { recount(oldValue?.response, stateCache?.response) }
    }
    /// The last page rendered, valid on the same terms, for the same session id (its forms carry
    /// a token made from the id) and the same URL (`KeptPage`).
    @exclusivity(unchecked) var pageCache: KeptPage? {
        didSet { recount(oldValue?.response, pageCache?.response) }
    }
    /// The budget the two caches' bytes count against (set when the app is a session's live app;
    /// `nil` for a throwaway copy), and what they hold of it.
    @exclusivity(unchecked) var cacheBudget: CachedAnswerBudget?
    @exclusivity(unchecked) var cachedBytes = 0
    /// The URL of the page kept for the next request, if one is (what a session keeps in memory).
    package var keptPageTarget: String? { pageCache?.target }
    /// Whether the state's answer is kept for the next read.
    package var keepsState: Bool { stateCache != nil }
    /// The bytes its kept answers hold of the shell's budget (`Shell.keptAnswerBytes`).
    package var keptAnswerBytes: Int { cachedBytes }
    /// A hash of the last page rendered and not kept (its version, session id and URL): a page is
    /// kept once it is asked for a second time (see `Shell.renderPage`).
    @exclusivity(unchecked) var pageRendered: Int?
    /// The coordinator tree as `coordinatorTree` made it last, with the tree's generation then.
    @exclusivity(unchecked) var treeCache: (generation: Int, tree: CoordinatorTree)?
    /// Streams opened by the request being handled, subscribed once its changes are committed.
    @exclusivity(unchecked) var pendingStreams: [OpenedStream] = []
    /// How many of this app's streams are subscribed.
    private(set) var streamCount = StreamCount()
    /// Names the session's open pages in `ShellEvents`: stable across id rotations, and kept in
    /// the snapshot, so that an app rebuilt from it publishes where the pages listen. It also
    /// names the app's line of versions in event ids (`<channel>.<version>`): a new session, or
    /// one that lost its app with its memory store, has a new one.
    package private(set) var channel = SessionID.random().text

    /// A session made of `root` and `coordinator`.
    package init(root: RootController, coordinator: any ApplicationCoordinator) {
        self.root = root
        self.coordinator = coordinator
        root.app = self
    }

    deinit { cacheBudget?.add(-cachedBytes) }

    /// The routes the app's coordinators declare (`Route`), derived once per app type.
    lazy var routes: [RouteEntry] = RestorationRegistry.of(type(of: coordinator)).routes

    /// The start-up work under way, if any (`StartupWork`).
    @exclusivity(unchecked) var startup: StartupState?

    /// Whether the app still has start-up work to do (the splash's): its pages refresh themselves
    /// without JavaScript, and the page's script passes the URL it was opened at on with its
    /// event stream (`data-starting`).
    public var isStarting: Bool { startup != nil }

    /// Takes over the channel of the app it was rebuilt from, and the count of that channel's
    /// streams when it has any (`ShellEvents.streamCount(of:)`).
    func adopt(channel: String, streamCount: StreamCount?) {
        self.channel = channel
        if let streamCount { self.streamCount = streamCount }
    }
}
