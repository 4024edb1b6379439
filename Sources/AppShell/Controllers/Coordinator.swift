import AppShellJSON

/// A coordinator, as in the Coordinator pattern of iOS apps: it owns a flow, starts child coordinators, and is told by its screens
/// what the user asked for. `finish()` removes it from its parent.
///
/// A coordinator declares what it shows, by type (`shows`): the framework derives from those
/// declarations, starting at the app coordinator's type, which screens and coordinators an app has
/// — its known actions, and the registry that rebuilds a session's controllers after a restart
/// (as UIKit's restoration identifiers do, with no switch per app).
open class Coordinator {
    /// The coordinator's name in `GET /api/state`'s tree (and in the stored snapshot).
    public let name: String
    /// The coordinator that started this one.
    public private(set) weak var parent: Coordinator?
    /// The coordinators this one started and that have not finished.
    public private(set) var children: [Coordinator] = []
    /// Changes whenever a coordinator joins or leaves this one's subtree: what is made from the
    /// tree (`LiveApp.coordinatorTree`) is made again only then, not at every state and snapshot.
    private(set) var treeGeneration = 0
    /// This coordinator's action handlers, each with the `ScreenActions` type it takes: a
    /// coordinator has one or two, looked up in order (a dictionary of one held 104 bytes, with
    /// every visitor's session at the login screen).
    private var handlers: [(type: ObjectIdentifier, handler: AnyObject)] = []

    /// A coordinator named `name`.
    public init(name: String) { self.name = name }

    /// The screens this coordinator shows and the coordinators it starts, by type: what a restart
    /// can make again under it. Override it with every type the coordinator shows. A route
    /// (`Route.push(_:from:)`, `Route.present(_:from:)`) declares its screen and how it is shown:
    /// the framework then shows it, with no handler.
    open class var shows: [any Restorable.Type] { [] }

    /// Starts the flow; override it.
    open func start() {}

    /// Adds `child` under this coordinator.
    public func addChild(_ child: Coordinator) {
        child.parent?.removeChild(child)
        child.parent = self
        children.append(child)
        treeDidChange()
    }

    /// Removes `child`, if it is one of this coordinator's.
    public func removeChild(_ child: Coordinator) {
        children.removeAll { $0 === child }
        if child.parent === self { child.parent = nil }
        treeDidChange()
    }

    /// Counts a change of this coordinator's subtree, and so of each of its ancestors'.
    private func treeDidChange() {
        var coordinator: Coordinator? = self
        while let current = coordinator {
            current.treeGeneration &+= 1
            coordinator = current.parent
        }
    }

    /// Ends this coordinator's flow: it leaves its parent.
    open func finish() { parent?.removeChild(self) }

    /// The first child with `name`, if any.
    public func child(named name: String) -> Coordinator? { children.first { $0.name == name } }

    /// The nearest coordinator of type `type` from this one up (itself included), e.g. the app
    /// coordinator that holds what the flows share.
    public func ancestor<C: Coordinator>(_ type: C.Type) -> C? {
        var coordinator: Coordinator? = self
        while let current = coordinator {
            if let found = current as? C { return found }
            coordinator = current.parent
        }
        return nil
    }

    /// `{"name": …, "children": […]}`, recursively.
    package var tree: JSON {
        ["name": .string(name), "children": .array(children.map(\.tree))]
    }

    // MARK: Screens and their actions

    /// Makes this coordinator handle every action of type `Action` that a screen it owns
    /// (`own(_:)`) reports. Call it in `init`: a coordinator rebuilt after a restart has its
    /// handlers again, and its restored screens find them. `body` should not retain `self`.
    public func handle<Action: ScreenActions>(
        _ type: Action.Type, _ body: @escaping (Action, ActionRequest) throws(ActionError) -> Void
    ) {
        let handler = (type: ObjectIdentifier(type), handler: ActionHandler(body) as AnyObject)
        if let index = handlers.firstIndex(where: { $0.type == handler.type }) {
            handlers[index] = handler
        } else {
            handlers.append(handler)
        }
    }

    /// The handler `handle(_:_:)` registered for `Action`, if any.
    func handler<Action: ScreenActions>(for type: Action.Type) -> ((Action, ActionRequest) throws(ActionError) -> Void)?
    {
        let type = ObjectIdentifier(type)
        return (handlers.first { $0.type == type }?.handler as? ActionHandler<Action>)?.body
    }

    /// Makes this coordinator the owner of `screen` (its actions come here) and returns it, to
    /// show it: `navigation.push(own(ListScreen()))` (a navigation controller: its screens).
    ///
    /// Its type must be one of `shows`, or a restart could not make it again. That is checked
    /// where it matters, when the session's snapshot is kept with the screen shown: the request
    /// (or the scheduled work) that showed it fails — 500, its changes dropped, the message,
    /// naming this coordinator and the screen, logged (`DeclarationError`). Not here with an
    /// `assert`, which killed the whole test process in debug builds and let release builds store
    /// sessions that a restart could not restore; nor with a thrown error, which every
    /// `push(own(…))` would have to handle for a mistake of the code, not of the request. A
    /// screen owned but never shown is no mistake: nothing has to be restored.
    @discardableResult
    public func own<S: ViewController>(_ screen: S) -> S {
        if let navigation = screen as? NavigationController {
            // A stack is not a screen of its own: its screens are.
            for inner in navigation.viewControllers { own(inner) }
            return screen
        }
        guard let owned = screen as? any OwnedScreen else { return screen }
        owned.owner = self
        DeclarationCheck.noteOwner(type(of: self), owns: type(of: screen))
        return screen
    }

    /// Takes back `screen`, one of `shows` that a restart made again, as this coordinator's own:
    /// by default it owns it (`own(_:)`). Override it to keep a reference to the screen (and call
    /// `super`).
    open func restore(_ screen: ViewController) {
        (screen as? any OwnedScreen)?.owner = self
    }
}

/// A coordinator's handler of one `ScreenActions` type.
private final class ActionHandler<Action: ScreenActions> {
    let body: (Action, ActionRequest) throws(ActionError) -> Void

    init(_ body: @escaping (Action, ActionRequest) throws(ActionError) -> Void) { self.body = body }
}
