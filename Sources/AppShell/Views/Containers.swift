/// Views under a header, with an optional footer — a grouped table's section.
public struct Section: View, PrimitiveView {
    let header: String?
    let footer: String?
    let content: ViewContent

    /// `content` under `header` (none: no header), with `footer` below it.
    public init(_ header: String? = nil, footer: String? = nil, @ViewBuilder content: () -> ViewContent) {
        self.header = header
        self.footer = footer
        self.content = content()
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(.section(header: header, footer: footer, content: content.nodes))
    }
}

/// A list: a row for each element of a collection, or for each view the closure builds.
public struct List: View, PrimitiveView {
    let rows: ListRows

    /// A row for each of `data`'s elements.
    public init<Data: Sequence>(_ data: Data, @ViewBuilder row: (Data.Element) -> ViewContent) {
        var nodes: [ViewNode] = []
        var ends: [Int] = []
        for element in data {
            nodes.append(contentsOf: row(element).nodes)
            ends.append(nodes.count)
        }
        rows = ListRows(nodes: nodes, ends: ends)
    }

    /// A row for each view `content` builds.
    public init(@ViewBuilder content: () -> ViewContent) {
        rows = ListRows(nodes: content().nodes, ends: [])
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.list(rows)) }
}

// The modifiers are inlinable: the app's module then sees the type they return
// (`ScreenMarked<…>`), and a `body` that uses one does not look up the conformance of an opaque
// type at run time at every read (1 000 instructions for main's title, callgrind).
extension View {
    /// The screen's title: its heading, which gets the focus when the screen appears, and the
    /// page's `<title>`.
    @inlinable
    public func navigationTitle(_ title: String) -> some View {
        ScreenMarked(mark: .navigationTitle(title), content: self)
    }

    /// Which one of its kind the screen shows — a note's number — given in `GET /api/state` as
    /// `view.id` (SwiftUI's `.id(_:)`).
    @inlinable
    public func id(_ id: Int) -> some View { ScreenMarked(mark: .integerIdentity(id), content: self) }

    /// Which one of its kind the screen shows, given in `GET /api/state` as `view.id`.
    @inlinable
    public func id(_ id: String) -> some View { ScreenMarked(mark: .stringIdentity(id), content: self) }

    /// Views shown in the screen's navigation bar, above its content.
    @inlinable
    public func toolbar(@ViewBuilder _ items: () -> ViewContent) -> some View {
        ScreenMarked(mark: .toolbar(items()), content: self)
    }
}

/// A view with what it says of its screen — its title, its navigation bar's items, which one of
/// its kind it shows — written before it, where `ScreenView` takes it.
@usableFromInline
struct ScreenMarked<Content: View>: View, PrimitiveView {
    let mark: ViewNode
    let content: Content

    @usableFromInline
    init(mark: ScreenMark, content: Content) {
        self.mark = mark.node
        self.content = content
    }

    @usableFromInline var body: Never { return noBody() }

    @usableFromInline func _write(to nodes: inout ViewNodes) { append(to: &nodes) }

    func append(to nodes: inout ViewNodes) {
        nodes.append(mark)
        content._write(to: &nodes)
    }
}

/// What `ScreenMarked` says of its screen, as the inlinable modifiers name it (the nodes are the
/// framework's own).
@usableFromInline
enum ScreenMark {
    case navigationTitle(String)
    case integerIdentity(Int)
    case stringIdentity(String)
    case toolbar(ViewContent)

    var node: ViewNode {
        switch self {
        case .navigationTitle(let title): return .navigationTitle(title)
        case .integerIdentity(let id): return .identity(.integer(id))
        case .stringIdentity(let id): return .identity(.string(id))
        case .toolbar(let items): return .toolbar(items.nodes)
        }
    }
}
