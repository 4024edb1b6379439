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
    let rows: [[ViewNode]]

    /// A row for each of `data`'s elements.
    public init<Data: Sequence>(_ data: Data, @ViewBuilder row: (Data.Element) -> ViewContent) {
        rows = data.map { row($0).nodes }
    }

    /// A row for each view `content` builds.
    public init(@ViewBuilder content: () -> ViewContent) {
        rows = content().nodes.map { [$0] }
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.list(rows: rows)) }
}

extension View {
    /// The screen's title: its heading, which gets the focus when the screen appears, and the
    /// page's `<title>`.
    public func navigationTitle(_ title: String) -> some View {
        ScreenMarked(mark: .navigationTitle(title), content: self)
    }

    /// Which one of its kind the screen shows — a note's number — given in `GET /api/state` as
    /// `view.id` (SwiftUI's `.id(_:)`).
    public func id(_ id: Int) -> some View { ScreenMarked(mark: .identity(.integer(id)), content: self) }

    /// Which one of its kind the screen shows, given in `GET /api/state` as `view.id`.
    public func id(_ id: String) -> some View { ScreenMarked(mark: .identity(.string(id)), content: self) }

    /// Views shown in the screen's navigation bar, above its content.
    public func toolbar(@ViewBuilder _ items: () -> ViewContent) -> some View {
        ScreenMarked(mark: .toolbar(items().nodes), content: self)
    }
}

/// A view with what it says of its screen — its title, its navigation bar's items, which one of
/// its kind it shows — written before it, where `ScreenView` takes it.
struct ScreenMarked<Content: View>: View, PrimitiveView {
    let mark: ViewNode
    let content: Content

    var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(mark)
        content._write(to: &nodes)
    }
}
