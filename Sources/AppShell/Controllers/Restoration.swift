import AppShellConcurrency
import AppShellJSON
import AppShellSessions

/// A screen or coordinator type the framework can make again after a restart, as UIKit does from
/// a restoration identifier: what a coordinator lists in `Coordinator.shows`.
public protocol Restorable: AnyObject, SendableMetatype {}

/// A screen type that can be made again from its name alone, to rebuild a session's controllers
/// from a snapshot (as UIKit's restoration identifiers): a screen with `init()`.
///
/// A screen that shows something chosen when it was made (the note a detail screen shows, where
/// the login screen leads next) keeps it in `@SceneStorage` properties: the snapshot keeps their
/// values by the screen's place, and gives them back before any lifecycle call.
public protocol RestorableScreen: ViewController, Restorable {
    /// A new screen, as shown the first time.
    init()
}

/// Where a screen is in the controller tree, as the snapshot's extra names it: `root`, `stack.<n>`
/// (bottom first) or `presented`.
enum ScreenPlace {
    /// The screens of `root` by their place.
    static func screens(of root: RootController) -> [(String, ViewController)] {
        var screens: [(String, ViewController)] = []
        if let navigation = root.navigation {
            for (index, screen) in navigation.viewControllers.enumerated() {
                screens.append(("stack.\(index)", screen))
            }
        } else {
            screens.append(("root", root.child))
        }
        if let presented = root.presented { screens.append(("presented", presented)) }
        return screens
    }

    /// The screens' `@SceneStorage` values by place (`nil` when no screen keeps any).
    static func states(of root: RootController) -> JSON? {
        var states: [String: JSON] = [:]
        for (place, screen) in screens(of: root) {
            guard !screen.sceneValues.isEmpty else { continue }
            states[place] = .object(screen.sceneValues.mapValues(\.json))
        }
        return states.isEmpty ? nil : .object(states)
    }

    /// Gives each screen of `root` the `@SceneStorage` values `states` keeps for its place (a
    /// value of no kind the store writes is left out).
    static func restore(_ states: JSON?, in root: RootController) {
        guard let states else { return }
        for (place, screen) in screens(of: root) {
            guard let kept = states[place]?.objectValue else { continue }
            screen.sceneValues = kept.compactMapValues(DefaultsValue.init(json:))
        }
    }
}

/// A coordinator type that can be made again under its parent after a restart: the framework
/// makes it (not started) where the snapshot's coordinator tree names it, then gives it the
/// restored screens it shows (`Coordinator.restore(_:)`).
public protocol RestorableCoordinator: Coordinator, Restorable {
    /// The name its instances have (`Coordinator.name`), by which the snapshot names it.
    static var restorationIdentifier: String { get }
    /// The coordinator as it was under `parent` on `root`, not started; `nil` when what is
    /// restored cannot be its (the session then starts afresh).
    init?(restoringUnder parent: Coordinator, root: RootController)
}

/// An app's screens and coordinators, derived from the declarations (`Coordinator.shows`)
/// reachable from its app coordinator's type: the actions it knows, and how a session's
/// controller tree comes back from its snapshot.
package struct RestorationRegistry: Sendable {
    /// The screens by name, as `ScreenRegistry`.
    package let screens: ScreenRegistry
    private let coordinators: [String: @Sendable (Coordinator, RootController) -> Coordinator?]
    /// Which coordinator types declare each screen type.
    let owners: [ObjectIdentifier: Set<ObjectIdentifier>]
    /// The routes the coordinators declare (`Route`), in declaration order.
    let routes: [RouteEntry]

    /// The registry of everything `root` shows, directly or through the coordinators it shows.
    package init(root: Coordinator.Type) {
        var coordinators: [String: @Sendable (Coordinator, RootController) -> Coordinator?] = [:]
        var owners: [ObjectIdentifier: Set<ObjectIdentifier>] = [:]
        var routes: [RouteEntry] = []
        let screenTypes = Self.walk(from: root) { coordinator, shown in
            if let route = shown as? any DeclaredRoute.Type {
                routes.append(RouteEntry(route, declaredBy: coordinator))
            }
            if let screen = Self.screenType(of: shown) {
                owners[ObjectIdentifier(screen), default: []].insert(ObjectIdentifier(coordinator))
            } else if let child = shown as? any RestorableCoordinator.Type {
                coordinators[child.restorationIdentifier] = Self.maker(of: child)
            }
        }
        self.screens = ScreenRegistry(screenTypes)
        self.coordinators = coordinators
        self.owners = owners
        self.routes = routes
    }

    /// The screen type `shown` declares: itself, or the one a route shows.
    static func screenType(of shown: any Restorable.Type) -> (any RestorableScreen.Type)? {
        (shown as? any DeclaredRoute.Type)?.destination ?? shown as? any RestorableScreen.Type
    }

    /// What makes a `C` under a parent (a generic closure captures no metatype value).
    private static func maker<C: RestorableCoordinator>(
        of type: C.Type
    ) -> @Sendable (Coordinator, RootController) -> Coordinator? {
        { C(restoringUnder: $0, root: $1) }
    }

    /// Every screen type `root` shows, directly or through the coordinators it shows, each once,
    /// breadth first in declaration order.
    package static func screenTypes(shownBy root: Coordinator.Type) -> [ViewController.Type] {
        walk(from: root) { _, _ in }
    }

    /// Visits every declaration reachable from `root` (each coordinator type once) and returns
    /// the screen types met, each once.
    private static func walk(
        from root: Coordinator.Type, _ visit: (Coordinator.Type, any Restorable.Type) -> Void
    ) -> [ViewController.Type] {
        var screenTypes: [ViewController.Type] = []
        var seen = Set<ObjectIdentifier>()
        var visited = Set<ObjectIdentifier>()
        var pending: [Coordinator.Type] = [root]
        while !pending.isEmpty {
            let coordinator = pending.removeFirst()
            guard visited.insert(ObjectIdentifier(coordinator)).inserted else { continue }
            for shown in coordinator.shows {
                visit(coordinator, shown)
                if let screen = screenType(of: shown), seen.insert(ObjectIdentifier(screen)).inserted {
                    screenTypes.append(screen)
                } else if let child = shown as? any RestorableCoordinator.Type {
                    pending.append(child)
                }
            }
        }
        return screenTypes
    }

    /// The registry of `root`'s type, derived once per type.
    package static func of(_ root: Coordinator.Type) -> RestorationRegistry {
        let key = ObjectIdentifier(root)
        if let known = cache.withLock({ $0[key] }) { return known }
        let registry = RestorationRegistry(root: root)
        cache.withLock { $0[key] = registry }
        return registry
    }

    private static let cache = Locked<[ObjectIdentifier: RestorationRegistry]>([:])

    /// Rebuilds under `app` (an app coordinator made afresh, not started) the coordinators the
    /// snapshot's tree names, and gives each restored screen of `root` to the deepest coordinator
    /// that declares its type. Returns false — the session then starts afresh — when the tree
    /// names a coordinator the app lacks or one refuses what was restored, or when a screen has no
    /// coordinator to own it.
    package func restoreCoordinators(_ tree: JSON, under app: Coordinator, root: RootController) -> Bool {
        guard tree["name"]?.stringValue == app.name, restoreChildren(of: tree, under: app, root: root) else {
            return false
        }
        var screens: [ViewController] = root.navigation?.viewControllers ?? [root.child]
        if let presented = root.presented { screens.append(presented) }
        var flows: [(Coordinator, depth: Int)] = []
        func walk(_ coordinator: Coordinator, _ depth: Int) {
            flows.append((coordinator, depth))
            for child in coordinator.children { walk(child, depth + 1) }
        }
        walk(app, 0)
        for screen in screens {
            let declaring = owners[ObjectIdentifier(type(of: screen))] ?? []
            let candidates = flows.filter { declaring.contains(ObjectIdentifier(type(of: $0.0))) }
            guard let owner = candidates.max(by: { $0.depth < $1.depth })?.0 else { return false }
            owner.restore(screen)
        }
        return true
    }

    private func restoreChildren(of node: JSON, under parent: Coordinator, root: RootController) -> Bool {
        for child in node["children"]?.arrayValue ?? [] {
            guard let name = child["name"]?.stringValue, let make = coordinators[name],
                let coordinator = make(parent, root), coordinator.name == name
            else { return false }
            parent.addChild(coordinator)
            guard restoreChildren(of: child, under: coordinator, root: root) else { return false }
        }
        return true
    }
}
