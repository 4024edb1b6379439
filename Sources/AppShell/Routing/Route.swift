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
    public static func push<Destination: RestorableScreen, Source: ViewController>(
        _ screen: Destination.Type, from source: Source.Type
    ) -> any Restorable.Type {
        PushRoute<Destination, Source>.self
    }

    /// Presents a new `Destination` modally over `Source` when `Source` is the visible screen.
    public static func present<Destination: RestorableScreen, Source: ViewController>(
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
    static var source: ViewController.Type { get }
}

/// `Route.push`'s declaration.
final class PushRoute<Destination: RestorableScreen, Source: ViewController>: DeclaredRoute {
    static var kind: RouteKind { .push }
    static var destination: any RestorableScreen.Type { Destination.self }
    static var source: ViewController.Type { Source.self }
}

/// `Route.present`'s declaration.
final class PresentRoute<Destination: RestorableScreen, Source: ViewController>: DeclaredRoute {
    static var kind: RouteKind { .present }
    static var destination: any RestorableScreen.Type { Destination.self }
    static var source: ViewController.Type { Source.self }
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
    let make: @Sendable () -> ViewController

    init(_ route: any DeclaredRoute.Type, declaredBy coordinator: Coordinator.Type) {
        self.coordinator = ObjectIdentifier(coordinator)
        self.source = ObjectIdentifier(route.source)
        let sample = route.destination.init()
        self.name = sample.name
        self.title = sample.title
        self.kind = route.kind
        self.make = Self.maker(of: route.destination)
    }

    private static func maker<S: RestorableScreen>(of type: S.Type) -> @Sendable () -> ViewController {
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
