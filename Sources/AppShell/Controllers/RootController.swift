import AppShellSessions

/// One session's root: it shows one child screen at a time and swaps it the way an iOS app's
/// `RootViewController` swaps its child view controller, presents modal screens over it, and runs every transition in order.
///
/// The server applies a transition at once, lifecycle first, completion last; `animated` only
/// tells the browser to play it. A transition asked for while another runs — from a lifecycle
/// callback or a completion — is queued and starts after the running one's completion, so
/// transitions never interleave and completions run in the order they were asked for.
public final class RootController: ContainerController {
    /// The child screen: splash, login, or a navigation controller holding main.
    public private(set) var child: ViewController
    /// The modal screen over everything, if any.
    public private(set) var presented: ViewController?
    /// The last 50 lifecycle events and completions.
    package private(set) var log = LifecycleLog()
    /// Incremented by every change the session can see.
    @exclusivity(unchecked) package private(set) var version = 0
    /// The last transition that ran and whether it was animated (for the browser).
    package private(set) var lastTransition: (kind: TransitionKind, animated: Bool)?
    /// The defaults of the request being handled: the bound session's (its store is made only
    /// when something reads it), else the last ones read or those the root was made with.
    public internal(set) var defaults: DefaultsStore {
        get {
            guard let session, !isPreview else { return detachedDefaults }
            let store = session.defaults
            detachedDefaults = store
            return store
        }
        set { detachedDefaults = newValue }
    }
    private var detachedDefaults: DefaultsStore
    /// The app's environment, the same for every session: the values the app gave at start and
    /// the shell's (`ShellApplication.environmentValues`, `EnvironmentValues.clock`).
    public let environment: EnvironmentValues
    /// The session of the request being handled (for id rotation).
    @exclusivity(unchecked) var session: SessionContext?
    /// Whether this root is a throwaway copy showing what a safe request (HEAD, a prefetch)
    /// would see: it reads its own copy of the defaults, never rotates the session's id and
    /// schedules nothing, so nothing it does reaches the session.
    var isPreview = false
    /// What the shell lends the screens during the request being handled.
    @exclusivity(unchecked) var services: ShellServices?
    /// The rest of the action being handled, handed off the session's lock (`finishLater`).
    var deferredAction: DeferredAction?
    /// The notifications the screens scheduled that are not delivered yet (kept in the snapshot).
    var notifications: [ScheduledNotification] = []
    /// Whether something the snapshot keeps changed without a new version (a notification).
    var snapshotIsStale = false
    /// The visible screen's `body` as rendered for the request being handled (`ViewController`'s
    /// `renderedView`); let go at the end of the request.
    var renderedView: RenderedView?
    /// The live app this root belongs to (it owns the root), for `open(deepLink:)`.
    weak var app: LiveApp?
    /// Whether the session must be stored at this request's end though it holds no values: a
    /// deep link the app opened during the start-up work waits in the snapshot only.
    var storesWithoutValues = false
    /// What screens use to reach this root.
    public private(set) lazy var context = ScreenContext(root: self)

    /// The transitions asked for while one runs (none allocated unless one was).
    private var queue: [() -> Void] = []
    private var isTransitioning = false
    /// The screens whose `viewDidLoad` ran and that are still in the hierarchy: a few, so an
    /// array (a set of two was 96 bytes with every session's app).
    private var loaded: [ObjectIdentifier] = []

    /// A root that starts with `initial` as its child, as `RootVC.init()` does with the splash:
    /// the child is added (`willMove`, `viewDidLoad`, `didMove`) and appears. Its screens and
    /// coordinators read `environment`.
    package init(
        initial: ViewController, defaults: DefaultsStore, environment: EnvironmentValues = EnvironmentValues()
    ) {
        child = initial
        detachedDefaults = defaults
        self.environment = environment
        initial.context = context
        call(.willMove, on: initial, parent: self)
        load(initial)
        call(.didMove, on: initial, parent: self)
        call(.viewWillAppear, on: initial, animated: false)
        call(.viewDidAppear, on: initial, animated: false)
    }

    /// A root restored from a snapshot: the screens are in place, no lifecycle runs. Its screens
    /// and coordinators read `environment`.
    package init(
        restoring child: ViewController, presented: ViewController?, log: LifecycleLog, version: Int,
        lastTransition: LastTransition? = nil, defaults: DefaultsStore,
        environment: EnvironmentValues = EnvironmentValues()
    ) {
        self.environment = environment
        self.child = child
        self.presented = presented
        self.log = log
        self.version = version
        self.lastTransition = lastTransition.map { ($0.kind, $0.animated) }
        detachedDefaults = defaults
        child.context = context
        presented?.context = context
        for screen in [child, presented].compactMap({ $0 }) {
            markLoaded(screen)
            if let navigation = screen as? NavigationController {
                for inner in navigation.viewControllers {
                    inner.context = context
                    markLoaded(inner)
                }
            }
        }
    }

    /// The screen the user sees: the modal one, else the top of the navigation stack, else the child.
    public var visibleScreen: ViewController {
        if let presented { return presented }
        if let navigation = child as? NavigationController { return navigation.topScreen }
        return child
    }

    /// The child when it is a navigation controller.
    public var navigation: NavigationController? { child as? NavigationController }

    /// Records a change that is not a transition (e.g. a defaults flag an action set).
    package func noteChange() { version += 1 }

    /// Shows `deepLink` (a same-site path the app knows) once the app can, as a page URL's deep
    /// link is shown (`LiveApp.open(deepLink:)`): during the start-up work (the splash) it waits
    /// and is kept in the snapshot, so a restart meanwhile keeps it; after it, the app coordinator
    /// opens it (`ApplicationCoordinator.open(deepLink:)`). A coordinator's `launch` during the
    /// splash hands its target here; the session is then stored even when it holds no values
    /// (a page URL's deep link of a visitor with none is kept in memory only).
    public func open(deepLink: String) {
        guard let app else { return }
        if app.isStarting { storesWithoutValues = true }
        app.open(deepLink: deepLink)
    }

    /// Whether the app still has start-up work to do (`LiveApp.isStarting`).
    public var isStarting: Bool { app?.isStarting ?? false }

    /// Gives the session a new id (keeping its values) when this request ends: call it on every
    /// login and logout.
    public func rotateSessionID() {
        guard !isPreview else { return }
        session?.rotateID()
    }

    /// The id of the session of the request being handled (`nil` outside a request), for keys
    /// that must follow the session, such as a login limiter's. It is a secret: never show it.
    package var sessionID: SessionID? { session?.id }

    // MARK: Transitions

    /// Swaps the child for `new` (a splash to login, login to main): A willMove(nil), B willMove(root), A
    /// viewWillDisappear, B viewWillAppear, A viewDidDisappear, B viewDidAppear, A
    /// removeFromParent, B didMove(root), completion. A modal screen up when the swap's turn
    /// comes is dismissed first (without animation, with dismiss's order and completion).
    public func transition(to new: ViewController, animated: Bool = true, completion: (() -> Void)? = nil) {
        // Whether a modal screen is up is known only when this runs: a present asked for before
        // the swap may still be queued. Run when nothing else is (the common case), it dismisses
        // at once, and what that dismissal asks for (main pushing the list) runs before the swap.
        schedule { [unowned self] in
            guard presented != nil else { return }
            dismissModal(animated: false)
            complete(.dismiss, animated: false, completion: nil)
        }
        enqueue(.root, animated: animated, completion: completion) { [unowned self] in
            let old = child
            new.context = context
            call(.willMove, on: old, parent: nil)
            call(.willMove, on: new, parent: self)
            load(new)
            call(.viewWillDisappear, on: old, animated: animated)
            call(.viewWillAppear, on: new, animated: animated)
            call(.viewDidDisappear, on: old, animated: animated)
            call(.viewDidAppear, on: new, animated: animated)
            child = new
            record(old, .removeFromParent)
            forget(old)
            call(.didMove, on: new, parent: self)
        }
    }

    /// Presents `screen` modally over the visible one: A viewWillDisappear, B viewWillAppear,
    /// B viewDidAppear, A viewDidDisappear, completion.
    public func present(_ screen: ViewController, animated: Bool = true, completion: (() -> Void)? = nil) {
        enqueue(.present, animated: animated, completion: completion) { [unowned self] in
            let old = visibleScreen
            screen.context = context
            load(screen)
            call(.viewWillDisappear, on: old, animated: animated)
            call(.viewWillAppear, on: screen, animated: animated)
            presented = screen
            call(.viewDidAppear, on: screen, animated: animated)
            call(.viewDidDisappear, on: old, animated: animated)
        }
    }

    /// Dismisses the modal screen: B viewWillDisappear, A viewWillAppear, A viewDidAppear,
    /// B viewDidDisappear, completion. Does nothing (but complete) when none is presented.
    public func dismiss(animated: Bool = true, completion: (() -> Void)? = nil) {
        enqueue(.dismiss, animated: animated, completion: completion) { [unowned self] in
            dismissModal(animated: animated)
        }
    }

    /// Dismiss's lifecycle steps, for the modal screen up now (none: nothing happens).
    private func dismissModal(animated: Bool) {
        guard let modal = presented else { return }
        presented = nil
        let below = visibleScreen
        call(.viewWillDisappear, on: modal, animated: animated)
        call(.viewWillAppear, on: below, animated: animated)
        call(.viewDidAppear, on: below, animated: animated)
        call(.viewDidDisappear, on: modal, animated: animated)
        forget(modal)
    }

    /// Runs `steps` as a transition of `kind` now, or after the running one when one runs. The
    /// steps read the controllers as they are when they run, not when they were asked for.
    func enqueue(
        _ kind: TransitionKind, animated: Bool, completion: (() -> Void)?, _ steps: @escaping () -> Void
    ) {
        schedule { [unowned self] in
            steps()
            complete(kind, animated: animated, completion: completion)
        }
    }

    /// What ends every transition: it becomes the last one, the version moves on, the log
    /// records its completion, then the completion runs.
    private func complete(_ kind: TransitionKind, animated: Bool, completion: (() -> Void)?) {
        lastTransition = (kind, animated)
        version += 1
        log.append(.completion(kind))
        completion?()
    }

    /// Runs `work` now, or after the running transition (and those queued before) when one runs.
    /// Only work asked for meanwhile is queued, and the queue's storage goes once it is drained:
    /// it stayed with every session's app (48 bytes) after its first transition.
    private func schedule(_ work: @escaping () -> Void) {
        guard !isTransitioning else {
            queue.append(work)
            return
        }
        isTransitioning = true
        defer { isTransitioning = false }
        work()
        guard !queue.isEmpty else { return }
        while !queue.isEmpty { queue.removeFirst()() }
        queue = []
    }

    // MARK: Lifecycle calls

    /// Calls an appearance method on `screen` (forwarded to the top of a navigation controller)
    /// and records it.
    func call(_ event: LifecycleEvent, on screen: ViewController, animated: Bool) {
        let target = (screen as? NavigationController)?.topScreen ?? screen
        record(target, event)
        switch event {
        case .viewWillAppear: target.viewWillAppear(animated)
        case .viewDidAppear: target.viewDidAppear(animated)
        case .viewWillDisappear: target.viewWillDisappear(animated)
        case .viewDidDisappear: target.viewDidDisappear(animated)
        default: break
        }
    }

    /// Calls a containment method on `screen` and records it.
    func call(_ event: LifecycleEvent, on screen: ViewController, parent: (any ContainerController)?) {
        record(screen, event)
        if event == .willMove { screen.willMove(toParent: parent) } else { screen.didMove(toParent: parent) }
    }

    /// Calls `viewDidLoad` the first time a screen (or a navigation controller's top) is shown.
    func load(_ screen: ViewController) {
        let target = (screen as? NavigationController)?.topScreen ?? screen
        guard markLoaded(target) else { return }
        if target !== screen { markLoaded(screen) }
        record(target, .viewDidLoad)
        target.viewDidLoad()
    }

    /// Forgets a screen that left the hierarchy (its identifier may be reused).
    func forget(_ screen: ViewController) {
        loaded.removeAll { $0 == ObjectIdentifier(screen) }
        if let navigation = screen as? NavigationController {
            for inner in navigation.viewControllers { loaded.removeAll { $0 == ObjectIdentifier(inner) } }
        }
    }

    /// Notes that `screen` was loaded; says whether it was not already.
    @discardableResult
    private func markLoaded(_ screen: ViewController) -> Bool {
        let identifier = ObjectIdentifier(screen)
        guard !loaded.contains(identifier) else { return false }
        loaded.append(identifier)
        return true
    }

    func record(_ screen: ViewController, _ event: LifecycleEvent) {
        log.append(.screen(screen.name, event))
    }
}
