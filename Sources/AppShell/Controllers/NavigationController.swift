import AppShellJSON

/// A stack of screens, as `UINavigationController`: push, pop and pop-to-root, each with an optional
/// completion that runs after every lifecycle callback of the transition.
///
/// It is shown as the root controller's child; its name, actions, HTML and state are those of
/// its screens (its name is its root screen's, its actions and render its top screen's).
public final class NavigationController: ViewController, ContainerController {
    /// The stack, bottom first.
    public private(set) var viewControllers: [ViewController]
    /// Where the stack reaches its session (given to every screen pushed).
    public override var context: ScreenContext? {
        didSet { for screen in viewControllers { screen.context = context } }
    }

    /// A stack whose bottom is `rootViewController`; it is named after it (a pop never removes it).
    public init(rootViewController: ViewController) {
        viewControllers = [rootViewController]
        super.init(name: rootViewController.name)
    }

    /// A stack restored as it was (no lifecycle runs).
    package init(restoring viewControllers: [ViewController]) {
        precondition(!viewControllers.isEmpty, "a navigation stack has at least its root screen")
        self.viewControllers = viewControllers
        super.init(name: viewControllers[0].name)
    }

    /// The screen on top of the stack.
    public var topScreen: ViewController { viewControllers[viewControllers.count - 1] }
    /// The top screen's actions.
    public override var actions: [String] { topScreen.actions }
    /// The top screen's title.
    public override var title: String { topScreen.title }

    private var root: RootController {
        guard let root = context?.root else { preconditionFailure("the navigation controller is not on screen") }
        return root
    }

    /// Pushes `screen`: A viewWillDisappear, B viewWillAppear, A viewDidDisappear, B viewDidAppear,
    /// completion.
    public func push(_ screen: ViewController, animated: Bool = true, completion: (() -> Void)? = nil) {
        let root = self.root
        root.enqueue(.push, animated: animated, completion: completion) { [unowned self] in
            let old = topScreen
            screen.context = context
            root.load(screen)
            root.call(.viewWillDisappear, on: old, animated: animated)
            root.call(.viewWillAppear, on: screen, animated: animated)
            viewControllers.append(screen)
            root.call(.viewDidDisappear, on: old, animated: animated)
            root.call(.viewDidAppear, on: screen, animated: animated)
        }
    }

    /// Pops the top screen: B viewWillDisappear, A viewWillAppear, B viewDidDisappear,
    /// A viewDidAppear, completion. At the root screen it only completes. The top screen is the
    /// one on top when the pop's turn comes: two pops asked for together remove two screens.
    public func pop(animated: Bool = true, completion: (() -> Void)? = nil) {
        popTo(keeping: { $0 - 1 }, animated: animated, completion: completion)
    }

    /// Pops every screen above the root one, with pop's order (the screens in between get no
    /// callbacks, as in UIKit).
    public func popToRoot(animated: Bool = true, completion: (() -> Void)? = nil) {
        popTo(keeping: { _ in 1 }, animated: animated, completion: completion)
    }

    /// Pops down to the number of screens `depth` gives for the stack's height when the pop runs
    /// (never below the root screen).
    private func popTo(keeping depth: @escaping (Int) -> Int, animated: Bool, completion: (() -> Void)?) {
        let root = self.root
        root.enqueue(.pop, animated: animated, completion: completion) { [unowned self] in
            let depth = depth(viewControllers.count)
            guard viewControllers.count > 1, depth < viewControllers.count else { return }
            let old = topScreen
            let removed = viewControllers[max(1, depth)...]
            viewControllers.removeSubrange(max(1, depth)...)
            let new = topScreen
            root.call(.viewWillDisappear, on: old, animated: animated)
            root.call(.viewWillAppear, on: new, animated: animated)
            root.call(.viewDidDisappear, on: old, animated: animated)
            root.call(.viewDidAppear, on: new, animated: animated)
            for screen in removed { root.forget(screen) }
        }
    }

    // Appearance (viewDidLoad … viewDidDisappear) is forwarded to the top screen by the root
    // controller: the stack's own callbacks do nothing.

    /// Passed on to the root screen.
    public override func willMove(toParent parent: (any ContainerController)?) {
        viewControllers[0].willMove(toParent: parent)
    }
    /// Passed on to the root screen.
    public override func didMove(toParent parent: (any ContainerController)?) {
        viewControllers[0].didMove(toParent: parent)
    }
    /// The top screen's HTML.
    public override func renderHTML() -> String { topScreen.renderHTML() }
    /// The top screen's state.
    public override func state() -> JSON? { topScreen.state() }
    /// The top screen handles the action.
    public override func perform(_ action: ActionRequest) throws(ActionError) { try topScreen.perform(action) }
}
