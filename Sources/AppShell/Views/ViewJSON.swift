import AppShellJSON

/// Nodes written as `GET /api/state`'s JSON — what each shows, without markup — straight to bytes,
/// each object's keys in sorted order (as `JSON` writes them).
///
/// Written for an action's answer (callgrind): nodes are read in place, not copied out of their
/// arrays, and a string's quotes are written with the literals around it (`","label":"`), one
/// append where `JSON.writeString` made three.
struct ViewJSON {
    let context: ScreenContext?
    var output: [UInt8]

    /// A writer appending to `output`.
    init(context: ScreenContext?, output: [UInt8]) {
        self.context = context
        self.output = output
    }

    /// Writes `nodes` as an array (raw HTML and the screen's marks left out).
    mutating func write(_ nodes: some RandomAccessCollection<ViewNode>) {
        output.append(UInt8(ascii: "["))
        var first = true
        for index in nodes.indices where nodes[index].isInJSON {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            write(nodes[index])
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Appends `literal`, then `text` escaped: the literal opens the string's quote, what is
    /// appended next closes it.
    private mutating func append(_ literal: StaticString, _ text: String) {
        JSON.append(literal, to: &output)
        JSON.writeEscaped(text, into: &output)
    }

    private mutating func append(_ literal: StaticString) { JSON.append(literal, to: &output) }

    @inline(__always)
    private mutating func write(_ node: ViewNode) {
        switch node {
        case .text(let text, let font, let secondary):
            if font != .body {
                append("{\"font\":\"", font.rawValue)
                append(secondary ? "\",\"secondary\":true,\"text\":\"" : "\",\"text\":\"", text)
            } else {
                append(secondary ? "{\"secondary\":true,\"text\":\"" : "{\"text\":\"", text)
            }
            append("\",\"type\":\"text\"}")
        case .message(let text):
            append("{\"text\":\"", text)
            append("\",\"type\":\"message\"}")
        case .image(let file, let label, _, _):
            if let label {
                append("{\"label\":\"", label)
                append("\",\"type\":\"image\",\"url\":\"", context?.assetURL(file) ?? "/" + file)
            } else {
                append("{\"type\":\"image\",\"url\":\"", context?.assetURL(file) ?? "/" + file)
            }
            append("\"}")
        case .link(let label, let destination):
            append("{\"label\":\"", label)
            append("\",\"type\":\"link\",\"url\":\"", destination)
            append("\"}")
        case .button(let button):
            write(button)
        case .form(let form):
            append("{\"action\":\"", form.action)
            append("\",\"fields\":")
            write(form.fields)
            if let role = form.role {
                append(",\"role\":\"", role.rawValue)
                append("\",\"submitLabel\":\"", form.submitLabel)
            } else {
                append(",\"submitLabel\":\"", form.submitLabel)
            }
            append("\",\"type\":\"form\"}")
        case .field(let field):
            write(field)
        case .section(let header, let footer, let content):
            append("{\"content\":")
            write(content)
            if let footer {
                append(",\"footer\":\"", footer)
                output.append(UInt8(ascii: "\""))
            }
            if let header {
                append(",\"header\":\"", header)
                output.append(UInt8(ascii: "\""))
            }
            append(",\"type\":\"section\"}")
        case .list(let rows):
            append("{\"rows\":[")
            var first = true
            rows.forEachRow { row in
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                write(row)
            }
            append("],\"type\":\"list\"}")
        case .navigationTitle, .toolbar, .identity, .raw:
            break
        }
    }

    private mutating func write(_ button: ViewButton) {
        append("{\"action\":\"", button.action)
        append("\",\"label\":\"", button.label)
        if !button.parameters.isEmpty {
            append("\",\"parameters\":{")
            for index in button.parameters.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSON.writeString(button.parameters[index].name, into: &output)
                output.append(UInt8(ascii: ":"))
                JSON.writeString(button.parameters[index].value, into: &output)
            }
            if let role = button.role {
                append("},\"role\":\"", role.rawValue)
                append("\",\"type\":\"button\"}")
            } else {
                append("},\"type\":\"button\"}")
            }
        } else if let role = button.role {
            append("\",\"role\":\"", role.rawValue)
            append("\",\"type\":\"button\"}")
        } else {
            append("\",\"type\":\"button\"}")
        }
    }

    private mutating func write(_ field: ViewField) {
        append("{\"kind\":\"", field.kind.rawValue)
        if field.kind != .hidden { append("\",\"label\":\"", field.label) }
        output.append(UInt8(ascii: "\""))
        if let length = field.maxLength {
            append(",\"maxLength\":")
            output.append(contentsOf: String(length).utf8)
        }
        append(",\"name\":\"", field.name)
        append(field.required ? "\",\"required\":true,\"type\":\"field\"" : "\",\"type\":\"field\"")
        // A password is never sent back.
        if field.kind != .secure {
            append(",\"value\":\"", field.value)
            output.append(UInt8(ascii: "\""))
        }
        output.append(UInt8(ascii: "}"))
    }
}

extension ViewNode {
    /// Whether the node is written in the JSON's arrays: raw HTML is not, and the screen's marks
    /// (title, toolbar, identity) have members of their own.
    var isInJSON: Bool {
        switch self {
        case .raw, .navigationTitle, .toolbar, .identity: return false
        default: return true
        }
    }
}
