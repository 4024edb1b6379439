import AppShellJSON

/// A coordinator (seed 003): it owns a flow, starts child coordinators, and is told by its screens
/// what the user asked for. `finish()` removes it from its parent.
open class Coordinator {
    /// The coordinator's name in `GET /api/state`'s tree.
    public let name: String
    /// The coordinator that started this one.
    public private(set) weak var parent: Coordinator?
    /// The coordinators this one started and that have not finished.
    public private(set) var children: [Coordinator] = []

    /// A coordinator named `name`.
    public init(name: String) { self.name = name }

    /// Starts the flow; override it.
    open func start() {}

    /// Adds `child` under this coordinator.
    public func addChild(_ child: Coordinator) {
        child.parent?.removeChild(child)
        child.parent = self
        children.append(child)
    }

    /// Removes `child`, if it is one of this coordinator's.
    public func removeChild(_ child: Coordinator) {
        children.removeAll { $0 === child }
        if child.parent === self { child.parent = nil }
    }

    /// Ends this coordinator's flow: it leaves its parent.
    open func finish() { parent?.removeChild(self) }

    /// The first child with `name`, if any.
    public func child(named name: String) -> Coordinator? { children.first { $0.name == name } }

    /// `{"name": …, "children": […]}`, recursively.
    public var tree: JSON {
        ["name": .string(name), "children": .array(children.map(\.tree))]
    }
}
