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
    /// Everything else, in order.
    let content: [ViewNode]

    /// The parts of `view`'s nodes.
    init(_ view: some View) {
        var title: String?
        var identity: ViewIdentity?
        var toolbar: [ViewNode] = []
        var content: [ViewNode] = []
        for node in view.nodes {
            switch node {
            case .navigationTitle(let text): title = title ?? text
            case .toolbar(let items): toolbar.append(contentsOf: items)
            case .identity(let value): identity = identity ?? value
            default: content.append(node)
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

    /// The screen's `view` in `GET /api/state`, compact JSON (keys sorted, as `JSON` writes them).
    func jsonBytes(of screen: ViewController) -> [UInt8] {
        var writer = ViewJSON(context: screen.context)
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
        return writer.output
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

/// A screen's `body` rendered for the request being handled: the nodes and the JSON are made once
/// for the state, the page and the title, for as long as the version and the stored values stay
/// the same. The root keeps one, for the request only (`Shell.withBound` lets it go), so no
/// session holds a rendered view between requests.
final class RenderedView {
    let screen: ObjectIdentifier
    let version: Int
    let values: [String: DefaultsValue]
    let view: ScreenView
    private var bytes: [UInt8]?

    init(screen: ObjectIdentifier, version: Int, values: [String: DefaultsValue], view: ScreenView) {
        self.screen = screen
        self.version = version
        self.values = values
        self.view = view
    }

    /// `ScreenView.jsonBytes(of:)`, made once.
    func jsonBytes(of screen: ViewController) -> [UInt8] {
        if let bytes { return bytes }
        let made = view.jsonBytes(of: screen)
        bytes = made
        return made
    }
}

/// How to read the `body` of each screen type that is a `View` (`nil` for one that is not), found
/// once per type: asking a screen whether it is a `View` (a conformance lookup and an existential)
/// cost more than a small screen's whole tree.
private let bodyReaders = Locked<[ObjectIdentifier: BodyReader?]>([:])

/// Reads the `body` of the screens of one type.
final class BodyReader: @unchecked Sendable {
    // @unchecked: `read` captures nothing but a type, which never changes.
    let read: (ViewController) -> ScreenView

    init(_ read: @escaping (ViewController) -> ScreenView) { self.read = read }

    /// Reads the `body` of screens of type `V`, a `ViewController` subclass.
    static func of<V: View>(_ type: V.Type) -> BodyReader {
        BodyReader { screen in ScreenView(unsafeBitCast(screen, to: V.self)) }
    }
}

extension ViewController {
    /// What reads this screen's `body`, when it is a `View`.
    var bodyReader: BodyReader? {
        let type = ObjectIdentifier(Swift.type(of: self))
        if let known = bodyReaders.withLock({ $0[type] }) { return known }
        let reader = (Swift.type(of: self) as? any View.Type).map { BodyReader.of($0) }
        bodyReaders.withLock { $0[type] = .some(reader) }
        return reader
    }

    /// The screen's `body` rendered as the session is now, when the screen is a `View`.
    var renderedView: RenderedView? {
        let root = context?.root
        let version = root?.version ?? -1
        let values = root?.session?.storedValues ?? root?.defaults.storedValues ?? [:]
        let identity = ObjectIdentifier(self)
        if let kept = root?.renderedView, kept.screen == identity, kept.version == version, kept.values == values {
            return kept
        }
        guard let reader = bodyReader else { return nil }
        let rendered = RenderedView(screen: identity, version: version, values: values, view: reader.read(self))
        root?.renderedView = rendered
        return rendered
    }
}
