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

/// Nodes written as HTML: each text and attribute escaped; forms with the session's token.
struct ViewHTML {
    let context: ScreenContext?

    mutating func html(_ nodes: [ViewNode]) -> String {
        var html = ""
        for node in nodes { write(node, into: &html) }
        return html
    }

    private mutating func write(_ node: ViewNode, into html: inout String) {
        switch node {
        case .text(let text, let font, let secondary):
            let classes = [font == .caption ? "caption" : nil, secondary ? "secondary" : nil].compactMap { $0 }
            let classAttribute = classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\""
            let tag = font == .headline ? "h2" : "p"
            html += "<\(tag)\(classAttribute)>\(HTML.escape(text))</\(tag)>\n"
        case .message(let text):
            html += "<p class=\"message\" role=\"alert\">\(HTML.escape(text))</p>\n"
        case .image(let file, let label, let width, let height):
            let url = context?.assetURL(file) ?? "/" + file
            html += "<img src=\"\(HTML.escape(url))\" alt=\"\(HTML.escape(label ?? ""))\""
            if let width { html += " width=\"\(width)\"" }
            if let height { html += " height=\"\(height)\"" }
            html += ">\n"
        case .link(let label, let destination):
            html += "<a href=\"\(HTML.escape(destination))\">\(HTML.escape(label))</a>\n"
        case .button(let button):
            let fields = button.parameters.map {
                "<input type=\"hidden\" name=\"\(HTML.escape($0.name))\" value=\"\(HTML.escape($0.value))\">\n"
            }.joined()
            html += form(button.action, label: button.label, fields: fields, style: button.style, role: button.role)
        case .form(let form):
            let fields = self.html(form.fields)
            html += self.form(form.action, label: form.submitLabel, fields: fields, style: form.style, role: form.role)
        case .field(let field):
            write(field, into: &html)
        case .section(let header, let footer, let content):
            html += "<section class=\"group\">\n"
            if let header { html += "<h2>\(HTML.escape(header))</h2>\n" }
            html += self.html(content)
            if let footer { html += "<p class=\"footer\">\(HTML.escape(footer))</p>\n" }
            html += "</section>\n"
        case .list(let rows):
            html += "<ul>\n"
            for row in rows {
                var item = self.html(row)
                if item.hasSuffix("\n") { item.removeLast() }
                html += "<li>\(item)</li>\n"
            }
            html += "</ul>\n"
        case .navigationTitle, .toolbar, .identity:
            // Placed by the screen (`ScreenView`); nested deeper, they mean nothing.
            break
        case .raw(let raw):
            html += raw
        }
    }

    private func write(_ field: ViewField, into html: inout String) {
        let name = HTML.escape(field.name)
        if field.kind == .hidden {
            html += "<input type=\"hidden\" name=\"\(name)\" value=\"\(HTML.escape(field.value))\">\n"
            return
        }
        html += "<label for=\"\(name)\">\(HTML.escape(field.label))</label>\n"
        var attributes = "id=\"\(name)\" name=\"\(name)\""
        if field.kind == .secure { attributes += " type=\"password\"" }
        if let type = field.contentType { attributes += " autocomplete=\"\(type.rawValue)\"" }
        if let lines = field.lines { attributes += " rows=\"\(lines)\"" }
        if let length = field.maxLength { attributes += " maxlength=\"\(length)\"" }
        if field.required { attributes += " required" }
        switch field.kind {
        case .multiline:
            html += "<textarea \(attributes)>\(HTML.escape(field.value))</textarea>\n"
        case .text where !field.value.isEmpty:
            html += "<input \(attributes) value=\"\(HTML.escape(field.value))\">\n"
        default:
            html += "<input \(attributes)>\n"
        }
    }

    private func form(_ action: String, label: String, fields: String, style: ButtonStyle, role: ActionRole?) -> String
    {
        (context?.form(action, label: label, fields: fields, buttonClass: style.htmlClass, role: role) ?? "") + "\n"
    }
}

extension ButtonStyle {
    /// The class the stylesheet knows the style by.
    var htmlClass: String {
        switch self {
        case .automatic: return ""
        case .prominent: return "primary"
        case .destructive: return "danger"
        case .back: return "back"
        }
    }
}

/// Nodes written as `GET /api/state`'s JSON — what each shows, without markup — straight to bytes,
/// each object's keys in sorted order (as `JSON` writes them).
struct ViewJSON {
    let context: ScreenContext?
    var output: [UInt8] = []

    init(context: ScreenContext?) {
        self.context = context
        output.reserveCapacity(512)
    }

    /// Writes `nodes` as an array (raw HTML left out).
    mutating func write(_ nodes: [ViewNode]) {
        output.append(UInt8(ascii: "["))
        var first = true
        for node in nodes {
            if case .raw = node { continue }
            if case .navigationTitle = node { continue }
            if case .toolbar = node { continue }
            if case .identity = node { continue }
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            write(node)
        }
        output.append(UInt8(ascii: "]"))
    }

    private mutating func member(_ literal: StaticString, _ text: String) {
        JSON.append(literal, to: &output)
        JSON.writeString(text, into: &output)
    }

    private mutating func write(_ node: ViewNode) {
        switch node {
        case .text(let text, let font, let secondary):
            output.append(UInt8(ascii: "{"))
            if font != .body {
                member("\"font\":", font.rawValue)
                output.append(UInt8(ascii: ","))
            }
            if secondary { JSON.append("\"secondary\":true,", to: &output) }
            member("\"text\":", text)
            JSON.append(",\"type\":\"text\"}", to: &output)
        case .message(let text):
            member("{\"text\":", text)
            JSON.append(",\"type\":\"message\"}", to: &output)
        case .image(let file, let label, _, _):
            output.append(UInt8(ascii: "{"))
            if let label {
                member("\"label\":", label)
                output.append(UInt8(ascii: ","))
            }
            member("\"type\":\"image\",\"url\":", context?.assetURL(file) ?? "/" + file)
            output.append(UInt8(ascii: "}"))
        case .link(let label, let destination):
            member("{\"label\":", label)
            member(",\"type\":\"link\",\"url\":", destination)
            output.append(UInt8(ascii: "}"))
        case .button(let button):
            member("{\"action\":", button.action)
            member(",\"label\":", button.label)
            if !button.parameters.isEmpty {
                JSON.append(",\"parameters\":{", to: &output)
                for (index, parameter) in button.parameters.enumerated() {
                    if index > 0 { output.append(UInt8(ascii: ",")) }
                    JSON.writeString(parameter.name, into: &output)
                    output.append(UInt8(ascii: ":"))
                    JSON.writeString(parameter.value, into: &output)
                }
                output.append(UInt8(ascii: "}"))
            }
            if let role = button.role { member(",\"role\":", role.rawValue) }
            JSON.append(",\"type\":\"button\"}", to: &output)
        case .form(let form):
            member("{\"action\":", form.action)
            JSON.append(",\"fields\":", to: &output)
            write(form.fields)
            if let role = form.role { member(",\"role\":", role.rawValue) }
            member(",\"submitLabel\":", form.submitLabel)
            JSON.append(",\"type\":\"form\"}", to: &output)
        case .field(let field):
            member("{\"kind\":", field.kind.rawValue)
            if field.kind != .hidden { member(",\"label\":", field.label) }
            if let length = field.maxLength {
                JSON.append(",\"maxLength\":", to: &output)
                output.append(contentsOf: String(length).utf8)
            }
            member(",\"name\":", field.name)
            if field.required { JSON.append(",\"required\":true", to: &output) }
            JSON.append(",\"type\":\"field\"", to: &output)
            // A password is never sent back.
            if field.kind != .secure { member(",\"value\":", field.value) }
            output.append(UInt8(ascii: "}"))
        case .section(let header, let footer, let content):
            JSON.append("{\"content\":", to: &output)
            write(content)
            if let footer { member(",\"footer\":", footer) }
            if let header { member(",\"header\":", header) }
            JSON.append(",\"type\":\"section\"}", to: &output)
        case .list(let rows):
            JSON.append("{\"rows\":[", to: &output)
            for (index, row) in rows.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(row)
            }
            JSON.append("],\"type\":\"list\"}", to: &output)
        case .navigationTitle, .toolbar, .identity, .raw:
            break
        }
    }
}
