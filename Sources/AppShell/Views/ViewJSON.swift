import AppShellJSON

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
