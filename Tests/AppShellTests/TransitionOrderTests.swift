import AppShell
import AppShellSessions
import Testing

/// A screen that can run code from its lifecycle callbacks.
final class ProbeScreen: ViewController {
    var onViewDidAppear: (() -> Void)?
    override func viewDidAppear(_ animated: Bool) {
        let action = onViewDidAppear
        onViewDidAppear = nil
        action?()
    }
}

/// The lifecycle orders `RootController` and `NavigationController` document (push, pop,
/// present, dismiss, a root swap), event by event, animated and not.
@Suite struct TransitionOrderTests {
    static func root() -> (RootController, ProbeScreen) {
        let splash = ProbeScreen(name: "A")
        return (RootController(initial: splash, defaults: DefaultsStore()), splash)
    }

    /// The records after the first `start`.
    static func events(_ root: RootController, after start: Int) -> [LifecycleRecord] {
        Array(root.log.records.dropFirst(start))
    }

    static func s(_ name: String, _ event: LifecycleEvent) -> LifecycleRecord { .screen(name, event) }

    @Test func aNewRootAddsItsFirstChildAndShowsIt() {
        let (root, _) = Self.root()
        #expect(
            root.log.records == [
                Self.s("A", .willMove), Self.s("A", .viewDidLoad), Self.s("A", .didMove),
                Self.s("A", .viewWillAppear), Self.s("A", .viewDidAppear),
            ])
        #expect(root.version == 0)
    }

    @Test(arguments: [true, false])
    func rootSwap(animated: Bool) {
        let (root, _) = Self.root()
        let start = root.log.records.count
        var completed = false
        root.transition(to: ProbeScreen(name: "B"), animated: animated) { completed = true }
        #expect(completed)
        #expect(
            Self.events(root, after: start) == [
                Self.s("A", .willMove), Self.s("B", .willMove), Self.s("B", .viewDidLoad),
                Self.s("A", .viewWillDisappear), Self.s("B", .viewWillAppear), Self.s("A", .viewDidDisappear),
                Self.s("B", .viewDidAppear), Self.s("A", .removeFromParent), Self.s("B", .didMove),
                .completion(.root),
            ])
        #expect(root.child.name == "B")
        #expect(root.lastTransition?.animated == animated)
        #expect(root.version == 1)
    }

    @Test(arguments: [true, false])
    func present(animated: Bool) {
        let (root, _) = Self.root()
        let start = root.log.records.count
        root.present(ProbeScreen(name: "B"), animated: animated)
        #expect(
            Self.events(root, after: start) == [
                Self.s("B", .viewDidLoad), Self.s("A", .viewWillDisappear), Self.s("B", .viewWillAppear),
                Self.s("B", .viewDidAppear), Self.s("A", .viewDidDisappear), .completion(.present),
            ])
        #expect(root.presented?.name == "B")
        #expect(root.visibleScreen.name == "B")
    }

    @Test(arguments: [true, false])
    func dismiss(animated: Bool) {
        let (root, _) = Self.root()
        root.present(ProbeScreen(name: "B"), animated: animated)
        let start = root.log.records.count
        root.dismiss(animated: animated)
        #expect(
            Self.events(root, after: start) == [
                Self.s("B", .viewWillDisappear), Self.s("A", .viewWillAppear), Self.s("A", .viewDidAppear),
                Self.s("B", .viewDidDisappear), .completion(.dismiss),
            ])
        #expect(root.presented == nil)
    }

    static func navigationRoot() -> (RootController, NavigationController) {
        let (root, _) = Self.root()
        let navigation = NavigationController(rootViewController: ProbeScreen(name: "N"))
        root.transition(to: navigation, animated: false)
        return (root, navigation)
    }

    @Test(arguments: [true, false])
    func push(animated: Bool) {
        let (root, navigation) = Self.navigationRoot()
        let start = root.log.records.count
        var completed = false
        navigation.push(ProbeScreen(name: "B"), animated: animated) { completed = true }
        #expect(completed)
        #expect(
            Self.events(root, after: start) == [
                Self.s("B", .viewDidLoad), Self.s("N", .viewWillDisappear), Self.s("B", .viewWillAppear),
                Self.s("N", .viewDidDisappear), Self.s("B", .viewDidAppear), .completion(.push),
            ])
        #expect(navigation.viewControllers.map(\.name) == ["N", "B"])
    }

    @Test(arguments: [true, false])
    func pop(animated: Bool) {
        let (root, navigation) = Self.navigationRoot()
        navigation.push(ProbeScreen(name: "B"), animated: animated)
        let start = root.log.records.count
        navigation.pop(animated: animated)
        #expect(
            Self.events(root, after: start) == [
                Self.s("B", .viewWillDisappear), Self.s("N", .viewWillAppear), Self.s("B", .viewDidDisappear),
                Self.s("N", .viewDidAppear), .completion(.pop),
            ])
        #expect(navigation.viewControllers.map(\.name) == ["N"])
    }

    @Test func popToRootSkipsTheScreensInBetween() {
        let (root, navigation) = Self.navigationRoot()
        navigation.push(ProbeScreen(name: "B"), animated: false)
        navigation.push(ProbeScreen(name: "C"), animated: false)
        let start = root.log.records.count
        navigation.popToRoot(animated: true)
        #expect(
            Self.events(root, after: start) == [
                Self.s("C", .viewWillDisappear), Self.s("N", .viewWillAppear), Self.s("C", .viewDidDisappear),
                Self.s("N", .viewDidAppear), .completion(.pop),
            ])
        #expect(navigation.viewControllers.map(\.name) == ["N"])
    }

    @Test func aTransitionAskedForFromALifecycleCallbackRunsAfterTheCompletion() {
        let (root, navigation) = Self.navigationRoot()
        let pushed = ProbeScreen(name: "B")
        var order: [String] = []
        // B asks for a push from its own viewDidAppear, as the demo's main pushes the list for a launch.
        pushed.onViewDidAppear = {
            navigation.push(ProbeScreen(name: "C"), animated: true) { order.append("push C done") }
            order.append("asked for C")
        }
        let start = root.log.records.count
        navigation.push(pushed, animated: true) { order.append("push B done") }
        #expect(order == ["asked for C", "push B done", "push C done"])
        #expect(
            Self.events(root, after: start) == [
                Self.s("B", .viewDidLoad), Self.s("N", .viewWillDisappear), Self.s("B", .viewWillAppear),
                Self.s("N", .viewDidDisappear), Self.s("B", .viewDidAppear), .completion(.push),
                Self.s("C", .viewDidLoad), Self.s("B", .viewWillDisappear), Self.s("C", .viewWillAppear),
                Self.s("B", .viewDidDisappear), Self.s("C", .viewDidAppear), .completion(.push),
            ])
    }

    @Test func transitionsAskedForFromCompletionsRunInTheOrderAsked() {
        let (root, navigation) = Self.navigationRoot()
        var order: [String] = []
        navigation.push(ProbeScreen(name: "B"), animated: true) {
            order.append("B")
            root.present(ProbeScreen(name: "M"), animated: true) { order.append("M") }
            navigation.pop(animated: false) { order.append("pop") }
        }
        // The server applies transitions at once: the first push, and what its completion asked
        // for, are done before the next call.
        navigation.push(ProbeScreen(name: "C"), animated: true) { order.append("C") }
        #expect(order == ["B", "M", "pop", "C"])
        let completions = root.log.records.compactMap { record -> TransitionKind? in
            if case .completion(let kind) = record { return kind }
            return nil
        }
        #expect(completions.suffix(4) == [.push, .present, .pop, .push])
        #expect(navigation.viewControllers.map(\.name) == ["N", "C"])
        #expect(root.presented?.name == "M")
    }

    @Test func aRootSwapDismissesTheModalScreenFirst() {
        let (root, _) = Self.root()
        root.present(ProbeScreen(name: "M"), animated: true)
        let start = root.log.records.count
        root.transition(to: ProbeScreen(name: "B"), animated: true)
        let records = Self.events(root, after: start)
        #expect(records.first == Self.s("M", .viewWillDisappear))
        #expect(records.contains(.completion(.dismiss)))
        #expect(records.last == .completion(.root))
        #expect(root.presented == nil)
        #expect(root.visibleScreen.name == "B")
    }

    @Test func aSwapQueuedAfterAPresentDismissesTheModalScreenThatPresentLeft() {
        let (root, navigation) = Self.navigationRoot()
        var order: [String] = []
        // Both asked for while a push runs: whether a modal screen is up is known only when the
        // swap's turn comes, after the present ran.
        navigation.push(ProbeScreen(name: "B"), animated: false) {
            root.present(ProbeScreen(name: "M"), animated: true) { order.append("present") }
            root.transition(to: ProbeScreen(name: "C"), animated: true) { order.append("swap") }
        }
        #expect(order == ["present", "swap"])
        #expect(root.presented == nil)
        #expect(root.visibleScreen.name == "C")
        let tail = root.log.records.suffix(15)
        #expect(
            Array(tail) == [
                Self.s("M", .viewWillDisappear), Self.s("B", .viewWillAppear), Self.s("B", .viewDidAppear),
                Self.s("M", .viewDidDisappear), .completion(.dismiss),
                Self.s("N", .willMove), Self.s("C", .willMove), Self.s("C", .viewDidLoad),
                Self.s("B", .viewWillDisappear), Self.s("C", .viewWillAppear), Self.s("B", .viewDidDisappear),
                Self.s("C", .viewDidAppear), Self.s("N", .removeFromParent), Self.s("C", .didMove),
                .completion(.root),
            ])
    }

    @Test func aSwapWithNoModalScreenWhenItRunsDismissesNothing() {
        let (root, _) = Self.root()
        root.present(ProbeScreen(name: "M"), animated: false)
        root.dismiss(animated: false) {
            // Asked for while the dismiss completes: nothing is presented when it runs.
            root.transition(to: ProbeScreen(name: "B"), animated: true)
        }
        let completions = root.log.records.compactMap { record -> TransitionKind? in
            if case .completion(let kind) = record { return kind }
            return nil
        }
        #expect(completions == [.present, .dismiss, .root])
        #expect(root.version == 3)
    }

    @Test func twoQueuedPopsRemoveTwoScreens() {
        let (root, navigation) = Self.navigationRoot()
        navigation.push(ProbeScreen(name: "B"), animated: false)
        var order: [String] = []
        navigation.push(ProbeScreen(name: "C"), animated: false) {
            // Each pop takes the top screen of the stack as it is when its turn comes.
            navigation.pop(animated: true) { order.append("pop C") }
            navigation.pop(animated: true) { order.append("pop B") }
        }
        #expect(order == ["pop C", "pop B"])
        #expect(navigation.viewControllers.map(\.name) == ["N"])
        #expect(
            Array(root.log.records.suffix(10)) == [
                Self.s("C", .viewWillDisappear), Self.s("B", .viewWillAppear), Self.s("C", .viewDidDisappear),
                Self.s("B", .viewDidAppear), .completion(.pop),
                Self.s("B", .viewWillDisappear), Self.s("N", .viewWillAppear), Self.s("B", .viewDidDisappear),
                Self.s("N", .viewDidAppear), .completion(.pop),
            ])
    }

    @Test func aPopToRootQueuedAfterAPushRemovesThatScreenToo() {
        let (root, navigation) = Self.navigationRoot()
        navigation.push(ProbeScreen(name: "B"), animated: false) {
            navigation.push(ProbeScreen(name: "C"), animated: false)
            navigation.popToRoot(animated: false)
        }
        #expect(navigation.viewControllers.map(\.name) == ["N"])
        #expect(root.visibleScreen.name == "N")
    }

    @Test func theLogKeepsTheLast50() {
        let (root, navigation) = Self.navigationRoot()
        for _ in 0..<20 {
            navigation.push(ProbeScreen(name: "B"), animated: false)
            navigation.pop(animated: false)
        }
        #expect(root.log.records.count == LifecycleLog.capacity)
        #expect(root.log.records.last == .completion(.pop))
    }

    @Test func coordinatorsFinishByLeavingTheirParent() {
        let app = Coordinator(name: "app")
        let main = Coordinator(name: "main")
        let second = Coordinator(name: "second")
        app.addChild(main)
        main.addChild(second)
        #expect(
            app.tree == [
                "name": "app", "children": [["name": "main", "children": [["name": "second", "children": []]]]],
            ])
        second.finish()
        #expect(main.children.isEmpty)
        #expect(second.parent == nil)
        #expect(app.child(named: "main") === main)
    }
}
