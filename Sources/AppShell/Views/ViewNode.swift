/// What a view shows, as the renderers read it (`ViewHTML`, `ViewJSON`): the tree a screen's
/// `body` becomes, with every text kept as text until a renderer escapes it.
///
/// Not `indirect`: the children are in arrays (out of line already), so a node is one value, not
/// an allocation each — a screen's tree is made again at every change (callgrind: an action).
enum ViewNode: Equatable {
    /// A paragraph, or a heading (`Text(_:).font(.headline)`).
    case text(String, font: Font, secondary: Bool)
    /// A message for the user that the page announces (`role="alert"`): a refusal's words.
    case message(String)
    /// A file of the public directory shown as an image; `label` `nil` for a decorative one.
    case image(file: String, label: String?, width: Int?, height: Int?)
    /// A link to a URL of the site or elsewhere.
    case link(label: String, destination: String)
    /// A button that sends one of the screen's actions.
    case button(ViewButton)
    /// A form of fields that sends one action.
    case form(ViewForm)
    /// A field of a form (boxed: the largest payload, and the rarest).
    indirect case field(ViewField)
    /// Views under a header.
    case section(header: String?, footer: String?, content: [ViewNode])
    /// A list: its rows' nodes one after another, and where each row ends (`ListRows`).
    case list(ListRows)
    /// The screen's title (its heading, and the page's `<title>`).
    case navigationTitle(String)
    /// The views of the screen's navigation bar.
    case toolbar([ViewNode])
    /// What the screen shows is this one (`.id(_:)`): a note's number, say.
    case identity(ViewIdentity)
    /// HTML written by the app, not escaped (`RawHTML`); not in the JSON.
    case raw(String)
}

/// A button as the renderers read it.
struct ViewButton: Equatable {
    var label: String
    var action: String
    var parameters: [(name: String, value: String)]
    var role: ActionRole?
    var style: ButtonStyle

    static func == (a: ViewButton, b: ViewButton) -> Bool {
        a.label == b.label && a.action == b.action && a.role == b.role && a.style == b.style
            && a.parameters.elementsEqual(b.parameters) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A form as the renderers read it.
struct ViewForm: Equatable {
    var action: String
    var role: ActionRole?
    var submitLabel: String
    var style: ButtonStyle
    var fields: [ViewNode]
}

/// A form's field as the renderers read it.
struct ViewField: Equatable {
    /// How the field is written.
    enum Kind: String, Equatable {
        case text, secure, multiline, hidden
    }

    var kind: Kind
    var label: String
    var name: String
    var value: String
    var required: Bool
    var maxLength: Int?
    var contentType: TextContentType?
    var lines: Int?
}

/// What `.id(_:)` names: a number or a string.
enum ViewIdentity: Equatable {
    case integer(Int)
    case string(String)
}

/// A list's rows as one array of nodes: a row each node, or — for rows of several views — the
/// index after each row's last node. A list of one view a row (`List { Text(…) … }`) then makes
/// no array per row (1 600 of the instructions of a list's render, callgrind).
struct ListRows: Equatable {
    /// The rows' nodes, one row after another.
    var nodes: [ViewNode]
    /// The index after each row's last node; empty when every row is one node.
    var ends: [Int]

    /// Calls `body` with each row, in order.
    func forEachRow(_ body: (ArraySlice<ViewNode>) -> Void) {
        if ends.isEmpty {
            for index in nodes.indices { body(nodes[index...index]) }
            return
        }
        var start = 0
        for end in ends {
            body(nodes[start..<end])
            start = end
        }
    }
}
