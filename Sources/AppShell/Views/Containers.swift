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
    public func navigationTitle(_ title: String) -> some View { Titled(content: self, title: title) }

    /// Which one of its kind the screen shows — a note's number — given in `GET /api/state` as
    /// `view.id` (SwiftUI's `.id(_:)`).
    public func id(_ id: Int) -> some View { Identified(content: self, identity: .integer(id)) }

    /// Which one of its kind the screen shows, given in `GET /api/state` as `view.id`.
    public func id(_ id: String) -> some View { Identified(content: self, identity: .string(id)) }

    /// Views shown in the screen's navigation bar, above its content.
    public func toolbar(@ViewBuilder _ items: () -> ViewContent) -> some View {
        WithToolbar(content: self, items: items())
    }
}

/// A view that gives the screen its title.
struct Titled<Content: View>: View, PrimitiveView {
    let content: Content
    let title: String

    var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(.navigationTitle(title))
        content._write(to: &nodes)
    }
}

/// A view that gives the screen its navigation bar's items.
struct WithToolbar<Content: View>: View, PrimitiveView {
    let content: Content
    let items: ViewContent

    var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(.toolbar(items.nodes))
        content._write(to: &nodes)
    }
}

/// A view that names which one of its kind the screen shows.
struct Identified<Content: View>: View, PrimitiveView {
    let content: Content
    let identity: ViewIdentity

    var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(.identity(identity))
        content._write(to: &nodes)
    }
}
