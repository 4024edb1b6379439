/// A form: fields and the button that sends them as one action (`Form(action: .save,
/// submitLabel: "Save") { TextField(…) }`). Without JavaScript it posts to `/actions`; the page's
/// script sends it as JSON, with the fields as the action's parameters.
public struct Form: View, PrimitiveView {
    var form: ViewForm

    /// The fields `content` builds and a button labelled `submitLabel` that sends `action` (a
    /// case without associated values, or one whose values the fields replace).
    public init<Action: ScreenActions>(
        action: Action, submitLabel: String, @ViewBuilder content: () -> ViewContent
    ) {
        form = ViewForm(
            action: action.actionRequest.name, role: action.role, submitLabel: submitLabel, style: .automatic,
            fields: content().nodes)
    }

    /// The fields `content` builds and a button labelled `submitLabel` that sends the case
    /// `action` makes, its associated values read from the fields of the same names:
    /// `Form(action: ComposeAction.save, submitLabel: "Save") { TextField("Title", name: "title") … }`.
    public init<Action: ScreenActions, each Parameter: Decodable>(
        action: (repeat each Parameter) -> Action, submitLabel: String, @ViewBuilder content: () -> ViewContent
    ) {
        self.init(action: ActionProbe.sample(of: action), submitLabel: submitLabel, content: content)
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.form(form)) }
}

/// What a text field holds, for the browser's autofill (HTML's `autocomplete`).
public enum TextContentType: String, Sendable, Equatable {
    /// A username.
    case username
    /// A password the user has.
    case currentPassword = "current-password"
    /// A password the user chooses.
    case newPassword = "new-password"
    /// An email address.
    case email
    /// A name.
    case name
    /// Nothing to fill in (`off`).
    case none = "off"
}

/// A one-line text field of a form, labelled; its value is the parameter `name` of the action.
public struct TextField: View, PrimitiveView {
    var field: ViewField

    /// A field labelled `label` sending `name`, holding `text` at first.
    public init(_ label: String, name: String, text: String = "") {
        field = ViewField(
            kind: .text, label: label, name: name, value: text, required: false, maxLength: nil, contentType: nil,
            lines: nil)
    }

    /// The same field, which must not be empty.
    public func required(_ required: Bool = true) -> TextField {
        var copy = self
        copy.field.required = required
        return copy
    }

    /// The same field, holding at most `length` characters.
    public func maxLength(_ length: Int) -> TextField {
        var copy = self
        copy.field.maxLength = length
        return copy
    }

    /// The same field, filled in by the browser as `type`.
    public func textContentType(_ type: TextContentType) -> TextField {
        var copy = self
        copy.field.contentType = type
        return copy
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.field(field)) }
}

/// A password field of a form: what it holds is never shown, nor sent back in the page.
public struct SecureField: View, PrimitiveView {
    var field: ViewField

    /// A password field labelled `label` sending `name`.
    public init(_ label: String, name: String) {
        field = ViewField(
            kind: .secure, label: label, name: name, value: "", required: false, maxLength: nil,
            contentType: .currentPassword, lines: nil)
    }

    /// The same field, which must not be empty.
    public func required(_ required: Bool = true) -> SecureField {
        var copy = self
        copy.field.required = required
        return copy
    }

    /// The same field, filled in by the browser as `type` (`.newPassword` on a sign-up).
    public func textContentType(_ type: TextContentType) -> SecureField {
        var copy = self
        copy.field.contentType = type
        return copy
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.field(field)) }
}

/// A text field of several lines (HTML's `textarea`).
public struct TextEditor: View, PrimitiveView {
    var field: ViewField

    /// A field labelled `label` sending `name`, holding `text` at first, `lines` high.
    public init(_ label: String, name: String, text: String = "", lines: Int = 4) {
        field = ViewField(
            kind: .multiline, label: label, name: name, value: text, required: false, maxLength: nil,
            contentType: nil, lines: lines)
    }

    /// The same field, holding at most `length` characters.
    public func maxLength(_ length: Int) -> TextEditor {
        var copy = self
        copy.field.maxLength = length
        return copy
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.field(field)) }
}

/// A value a form sends without showing it (where a login leads next).
public struct HiddenField: View, PrimitiveView {
    let field: ViewField

    /// Sends `value` as `name`.
    public init(name: String, value: String) {
        field = ViewField(
            kind: .hidden, label: "", name: name, value: value, required: false, maxLength: nil, contentType: nil,
            lines: nil)
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.field(field)) }
}
