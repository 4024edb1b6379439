/// A button that sends one of the screen's actions — the form that works without JavaScript,
/// which the page's script sends as JSON. Its role (back, close, rotates-session) comes from the
/// action.
public struct Button: View, PrimitiveView {
    var button: ViewButton

    /// A button labelled `label` that sends `action` — its associated values, and `parameters`,
    /// as hidden fields (`Button("Open", action: NoteListAction.open(id: note.id))`).
    public init<Action: ScreenActions>(_ label: String, action: Action, parameters: [String: String] = [:]) {
        let sent = action.actionRequest
        var hidden = parameters
        for (name, value) in sent.parameters { hidden[name] = value.formText }
        button = ViewButton(
            label: label, action: sent.name,
            parameters: hidden.isEmpty ? [] : hidden.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
            role: action.role, style: .automatic)
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.button(button)) }
}

/// How a button looks: SwiftUI's button styles and roles.
public enum ButtonStyle: String, Sendable, Equatable {
    /// As the stylesheet makes buttons.
    case automatic
    /// The screen's main action.
    case prominent
    /// An action that destroys something.
    case destructive
    /// A back button, as a navigation bar's.
    case back
}

extension View {
    /// The buttons and forms in this view, styled `style`.
    public func buttonStyle(_ style: ButtonStyle) -> some View { StyledButtons(content: self, style: style) }
}

/// Views whose buttons have a style.
struct StyledButtons<Content: View>: View, PrimitiveView {
    let content: Content
    let style: ButtonStyle

    var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(contentsOf: content.nodes.map(restyled))
    }

    private func restyled(_ node: ViewNode) -> ViewNode {
        switch node {
        case .button(var button):
            button.style = style
            return .button(button)
        case .form(var form):
            form.style = style
            return .form(form)
        case .section(let header, let footer, let content):
            return .section(header: header, footer: footer, content: content.map(restyled))
        case .list(var rows):
            rows.nodes = rows.nodes.map(restyled)
            return .list(rows)
        case .toolbar(let items):
            return .toolbar(items.map(restyled))
        default:
            return node
        }
    }
}

/// A link to another URL — of the site, or elsewhere.
public struct Link: View, PrimitiveView {
    let label: String
    let destination: String

    /// A link labelled `label` to `destination`.
    public init(_ label: String, destination: String) {
        self.label = label
        self.destination = destination
    }

    /// A link labelled `label` to one of the app's pages (`Link("Open", page: NotesRoute.note(id: 1))`).
    public init(_ label: String, page: some AppRoutes) { self.init(label, destination: page.url) }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.link(label: label, destination: destination)) }
}
