/// A piece of what a screen shows, as a value — SwiftUI's `View`: a screen declares its `body`
/// from text, buttons bound to its actions, links, lists, sections, forms and images, and the
/// framework renders it twice: to the page's HTML (every string escaped by construction) and to
/// `GET /api/state`'s `view` (so the JSON describes exactly what the page shows).
///
/// Write a view of your own as SwiftUI's, from others:
///
/// ```swift
/// struct NoteRow: View {
///     let note: Note
///     var body: some View {
///         Button(note.title, action: NoteListAction.open(id: note.id))
///     }
/// }
/// ```
///
/// A screen is a view too: a `Screen` subclass that conforms to `View` renders its `body`.
public protocol View {
    /// The view this one is made of.
    associatedtype Body: View
    /// What the view shows.
    @ViewBuilder var body: Body { get }
    /// How the framework reads a view: a view of yours has its `body` read, the framework's own
    /// views write what they show. Not for apps to implement.
    func _write(to nodes: inout ViewNodes)
}

extension View {
    /// Writes the `body`'s nodes.
    ///
    /// Inlinable, so that a view of the app's module reads its `body` as the concrete type it is
    /// (not through the witness tables of an opaque type, looked up at run time at every read).
    @inlinable
    public func _write(to nodes: inout ViewNodes) { body._write(to: &nodes) }

    /// What the view shows, as nodes.
    var nodes: [ViewNode] {
        var nodes = ViewNodes()
        _write(to: &nodes)
        return nodes.list
    }
}

extension Never: View {
    /// A primitive view has no body.
    public var body: Never { return noBody() }
}

/// What views write as the framework reads them (`View._write(to:)`); its contents are the
/// framework's. One node is kept as it is: most statements of a `body` are one view, and an array
/// for each was an allocation each (callgrind).
public struct ViewNodes {
    enum Storage {
        case none
        case one(ViewNode)
        case many([ViewNode])
    }

    var storage = Storage.none

    init() {}

    /// Nothing yet, with room for `capacity` nodes when there will be more than one.
    init(capacity: Int) {
        guard capacity > 1 else { return }
        var nodes: [ViewNode] = []
        nodes.reserveCapacity(capacity)
        storage = .many(nodes)
    }

    /// How many nodes there are.
    var count: Int {
        switch storage {
        case .none: return 0
        case .one: return 1
        case .many(let nodes): return nodes.count
        }
    }

    init(_ nodes: [ViewNode]) {
        switch nodes.count {
        case 0: storage = .none
        case 1: storage = .one(nodes[0])
        default: storage = .many(nodes)
        }
    }

    /// The nodes, in order.
    var list: [ViewNode] {
        switch storage {
        case .none: return []
        case .one(let node): return [node]
        case .many(let nodes): return nodes
        }
    }

    mutating func append(_ node: ViewNode) {
        switch storage {
        case .none:
            storage = .one(node)
        case .one(let first):
            storage = .many([first, node])
        case .many(var nodes):
            storage = .none
            nodes.append(node)
            storage = .many(nodes)
        }
    }

    mutating func append(contentsOf other: ViewNodes) {
        switch other.storage {
        case .none: break
        case .one(let node): append(node)
        case .many(let nodes): append(contentsOf: nodes)
        }
    }

    mutating func append(contentsOf nodes: [ViewNode]) {
        switch storage {
        case .none:
            self = ViewNodes(nodes)
        case .one(let first):
            var all = [first]
            all.append(contentsOf: nodes)
            storage = .many(all)
        case .many(var all):
            storage = .none
            all.append(contentsOf: nodes)
            storage = .many(all)
        }
    }
}

/// A view the renderers know: it writes its nodes itself, with no body.
protocol PrimitiveView: View where Body == Never {
    /// Appends what the view shows to `nodes`.
    func append(to nodes: inout ViewNodes)
}

extension PrimitiveView {
    /// Its own nodes.
    public func _write(to nodes: inout ViewNodes) { append(to: &nodes) }
}

/// Views made by a `@ViewBuilder`: what `body` and the containers' closures return.
public struct ViewContent: View, PrimitiveView {
    let content: ViewNodes

    init(_ content: ViewNodes) { self.content = content }

    init(_ nodes: [ViewNode]) { content = ViewNodes(nodes) }

    /// The nodes, in order.
    var nodes: [ViewNode] { content.list }

    /// How many nodes there are.
    var count: Int { content.count }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(contentsOf: content) }
}

/// Nothing: a view that shows nothing.
public struct EmptyView: View, PrimitiveView {
    /// Nothing.
    public init() {}

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {}
}

/// Views grouped with no mark of their own, to apply a modifier to all of them.
public struct Group: View, PrimitiveView {
    let content: ViewContent

    /// The views `content` builds.
    public init(@ViewBuilder content: () -> ViewContent) { self.content = content() }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { content.append(to: &nodes) }
}

/// A view for each element of a collection, one after another (in a `List`, a row each).
public struct ForEach: View, PrimitiveView {
    let rows: [ViewContent]

    /// `content` of each of `data`'s elements.
    public init<Data: Sequence>(_ data: Data, @ViewBuilder content: (Data.Element) -> ViewContent) {
        rows = data.map(content)
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        for row in rows { nodes.append(contentsOf: row.content) }
    }
}

/// A primitive view's `body`: never read (the renderers take the view's nodes).
func noBody() -> Never { fatalError("a primitive view has no body") }
