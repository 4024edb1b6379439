import AppShellConcurrency
import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// A screen's `body`, rendered: the page's fragment and `GET /api/state`'s `view`, from one
/// tree of nodes — made once for both when the screen conforms to `View`.
///
/// The fragment is the screen's section: its title as the heading that gets the focus when it
/// appears (`<h1 id="<name>-title" tabindex="-1">`), the navigation bar's items, then the content;
/// a presented screen's section is a modal dialog. `view` is
/// `{"title", "toolbar"?, "content", "id"?, "message"?}`: the same title, items and content as JSON (a
/// `Message`'s text also as `message`, as screens gave it before).
struct ScreenView {
    /// The screen's title, from `.navigationTitle(_:)`, if it gives one.
    let title: String?
    /// The navigation bar's items.
    let toolbar: [ViewNode]
    /// Which one of its kind the screen shows, from `.id(_:)`.
    let identity: ViewIdentity?
    /// Everything else, in order — with the marks read above among them, which both writers
    /// skip: the nodes are kept as the `body` made them, not copied into an array of their own.
    let content: [ViewNode]

    /// The parts of `view`'s nodes.
    init(_ view: some View) {
        var nodes = ViewNodes()
        view._write(to: &nodes)
        var title: String?
        var identity: ViewIdentity?
        var toolbar: [ViewNode] = []
        let content = nodes.list
        for index in content.indices {
            switch content[index] {
            case .navigationTitle(let text): title = title ?? text
            case .toolbar(let items): toolbar.append(contentsOf: items)
            case .identity(let value): identity = identity ?? value
            default: continue
            }
        }
        self.title = title
        self.identity = identity
        self.toolbar = toolbar
        self.content = content
    }

    /// The screen's section, in HTML: every text escaped.
    func html(of screen: ViewController) -> String {
        let name = HTML.escape(screen.name)
        let heading = HTML.escape(title ?? screen.title)
        let presented = screen.context.map { $0.root.presented === screen } ?? false
        var html = "<section class=\"screen screen-\(name)\""
        if presented { html += " role=\"dialog\" aria-modal=\"true\"" }
        html += " aria-labelledby=\"\(name)-title\">\n<h1 id=\"\(name)-title\" tabindex=\"-1\">\(heading)</h1>\n"
        var writer = ViewHTML(context: screen.context)
        if !toolbar.isEmpty {
            html += "<nav class=\"toolbar\" aria-label=\"\(heading)\">\n"
            html += writer.html(toolbar)
            html += "</nav>\n"
        }
        html += writer.html(content)
        html += "</section>"
        return html
    }

    /// Appends the screen's `view` in `GET /api/state` to `output`: compact JSON, keys sorted (as
    /// `JSON` writes them).
    func writeJSON(of screen: ViewController, into output: inout [UInt8]) {
        var writer = ViewJSON(context: screen.context, output: [])
        swap(&writer.output, &output)
        defer { swap(&writer.output, &output) }
        JSON.append("{\"content\":", to: &writer.output)
        writer.write(content)
        switch identity {
        case .integer(let number)?:
            JSON.append(",\"id\":", to: &writer.output)
            writer.output.append(contentsOf: String(number).utf8)
        case .string(let text)?:
            JSON.append(",\"id\":", to: &writer.output)
            JSON.writeString(text, into: &writer.output)
        case nil:
            break
        }
        if let message = Self.firstMessage(in: content) {
            JSON.append(",\"message\":", to: &writer.output)
            JSON.writeString(message, into: &writer.output)
        }
        JSON.append(",\"title\":", to: &writer.output)
        JSON.writeString(title ?? screen.title, into: &writer.output)
        if !toolbar.isEmpty {
            JSON.append(",\"toolbar\":", to: &writer.output)
            writer.write(toolbar)
        }
        writer.output.append(UInt8(ascii: "}"))
    }

    private static func firstMessage(in nodes: [ViewNode]) -> String? {
        for node in nodes {
            switch node {
            case .message(let text): return text
            case .section(_, _, let inner): if let text = firstMessage(in: inner) { return text }
            case .form(let form): if let text = firstMessage(in: form.fields) { return text }
            default: continue
            }
        }
        return nil
    }
}
