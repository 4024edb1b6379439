import AppShellHTTP

/// Declarative routes, like a storyboard segue or SwiftUI's `NavigationLink`: one line in a
/// coordinator's `shows` both registers a screen type (for restoration) and declares how it is
/// shown, from which screen:
///
/// ```swift
/// override class var shows: [any Restorable.Type] {
///     [HomeScreen.self, Route.push(AboutScreen.self, from: HomeScreen.self)]
/// }
/// ```
///
/// The framework then offers the route on the presenting screen: its page shows a button for it
/// (a form posting `show` to `/actions`, sent as JSON by the page's script), and the `show`
/// action with `"screen": "about"` pushes or presents a new screen, owned by the coordinator that
/// declares the route, with UIKit's lifecycle order. A flow that needs logic (a parameter, a
/// check) handles its own action instead (`Coordinator.handle(_:_:)` and `own(_:)`).
public enum Route {
    /// Pushes a new `Destination` onto the navigation stack when `Source` is the visible screen.
    public static func push<Destination: RestorableScreen, Source: ScreenController>(
        _ screen: Destination.Type, from source: Source.Type
    ) -> any Restorable.Type {
        PushRoute<Destination, Source>.self
    }

    /// Presents a new `Destination` modally over `Source` when `Source` is the visible screen.
    public static func present<Destination: RestorableScreen, Source: ScreenController>(
        _ screen: Destination.Type, from source: Source.Type
    ) -> any Restorable.Type {
        PresentRoute<Destination, Source>.self
    }
}

/// How a route shows its screen.
enum RouteKind: Sendable {
    /// Onto the navigation stack.
    case push
    /// Modally, over the visible screen.
    case present
}

/// A route as a type, so that it fits in `Coordinator.shows` beside the screen types.
protocol DeclaredRoute: Restorable {
    /// How the screen is shown.
    static var kind: RouteKind { get }
    /// The screen it shows.
    static var destination: any RestorableScreen.Type { get }
    /// The screen it is offered on.
    static var source: any ScreenController.Type { get }
}

/// `Route.push`'s declaration.
final class PushRoute<Destination: RestorableScreen, Source: ScreenController>: DeclaredRoute {
    static var kind: RouteKind { .push }
    static var destination: any RestorableScreen.Type { Destination.self }
    static var source: any ScreenController.Type { Source.self }
}

/// `Route.present`'s declaration.
final class PresentRoute<Destination: RestorableScreen, Source: ScreenController>: DeclaredRoute {
    static var kind: RouteKind { .present }
    static var destination: any RestorableScreen.Type { Destination.self }
    static var source: any ScreenController.Type { Source.self }
}

/// One route of an app, as the registry derives it from the coordinators' declarations.
struct RouteEntry: Sendable {
    /// The coordinator type that declares it (and owns the screens it shows).
    let coordinator: ObjectIdentifier
    /// The screen type it is offered on.
    let source: ObjectIdentifier
    /// The shown screen's name: the `show` action's `screen`.
    let name: String
    /// The shown screen's title: the button's label.
    let title: String
    let kind: RouteKind
    /// Makes the screen to show.
    let make: @Sendable () -> any ScreenController

    init(_ route: any DeclaredRoute.Type, declaredBy coordinator: Coordinator.Type) {
        self.coordinator = ObjectIdentifier(coordinator)
        self.source = ObjectIdentifier(route.source)
        let sample = route.destination.init()
        self.name = sample.name
        self.title = sample.title
        self.kind = route.kind
        self.make = Self.maker(of: route.destination)
    }

    private static func maker<S: RestorableScreen>(of type: S.Type) -> @Sendable () -> any ScreenController {
        { S() }
    }
}

extension ActionDescription {
    /// `show` (with its `screen`): follows a route the visible screen offers (`Route`). Known in
    /// an app that declares a route, and then accepted on every screen: a screen name no route
    /// shows is 400, a route the visible screen lacks 409.
    public static let show = ActionDescription(
        name: "show", parameters: [ActionParameter(name: "screen", type: .string)])
}

extension LiveApp {
    /// The routes offered on the visible screen, with the coordinator that declares each: those
    /// its owner's type declares, then its owner's ancestors' — or, for a screen with no owner
    /// (a plain `ViewController`), those of the deepest coordinator declaring routes from it.
    func visibleRoutes() -> [(RouteEntry, Coordinator)] {
        guard !routes.isEmpty else { return [] }
        let visible = root.visibleScreen
        let source = ObjectIdentifier(type(of: visible))
        guard routes.contains(where: { $0.source == source }) else { return [] }
        var chain: [Coordinator] = []
        if let owner = (visible as? any OwnedScreen)?.owner {
            var next: Coordinator? = owner
            while let coordinator = next {
                chain.append(coordinator)
                next = coordinator.parent
            }
        } else {
            var flows: [(Coordinator, Int)] = []
            func walk(_ coordinator: Coordinator, _ depth: Int) {
                flows.append((coordinator, depth))
                for child in coordinator.children { walk(child, depth + 1) }
            }
            walk(coordinator, 0)
            chain = flows.sorted { $0.1 > $1.1 }.map(\.0)
        }
        var found: [(RouteEntry, Coordinator)] = []
        for coordinator in chain {
            let declaring = ObjectIdentifier(type(of: coordinator))
            for route in routes where route.source == source && route.coordinator == declaring {
                if !found.contains(where: { $0.0.name == route.name }) { found.append((route, coordinator)) }
            }
        }
        return found
    }

    /// `show`: follows the visible screen's route to `screen` — a new screen, owned by the
    /// coordinator that declares the route, pushed or presented.
    public func show(_ action: ScreenAction) throws(ActionError) {
        guard let name = action.string("screen"), routes.contains(where: { $0.name == name }) else {
            let names = Set(routes.map { "\"\($0.name)\"" }).sorted().joined(separator: " or ")
            throw ActionError(status: 400, "show needs \"screen\": \(names.isEmpty ? "a route's screen" : names)")
        }
        let visible = root.visibleScreen
        guard let (route, coordinator) = visibleRoutes().first(where: { $0.0.name == name }) else {
            throw ActionError(status: 409, "the \(visible.name) screen has no route to \"\(name)\"")
        }
        let screen = route.make()
        (screen as? any OwnedScreen)?.owner = coordinator
        switch route.kind {
        case .push:
            guard root.presented == nil, let navigation = root.navigation else {
                throw ActionError(status: 409, "the \(visible.name) screen is not in a navigation stack")
            }
            navigation.push(screen, animated: true)
        case .present:
            guard root.presented == nil else {
                throw ActionError(status: 409, "the \(visible.name) screen is presented already")
            }
            root.present(screen, animated: true)
        }
    }

    /// The visible screen's routes as buttons — forms that send `show`, with and without
    /// JavaScript — placed after the screen's own HTML; empty when it has none.
    func routesHTML() -> String {
        let offered = visibleRoutes()
        guard !offered.isEmpty, let context = root.visibleScreen.context else { return "" }
        let forms = offered.map { route, _ in
            let field = "<input type=\"hidden\" name=\"screen\" value=\"\(HTML.escape(route.name))\">\n"
            return context.form(ActionDescription.show.name, label: route.title, fields: field)
        }
        return "\n<nav class=\"routes\" aria-label=\"Go to\">\n" + forms.joined(separator: "\n") + "\n</nav>"
    }

    /// The visible screen's HTML with its routes' buttons: what the page shows in `#screen`.
    public func visibleHTML() -> String { root.visibleScreen.renderHTML() + routesHTML() }
}
