import AppShellHTTP

/// Nodes written as HTML: each text and attribute escaped; forms with the session's token.
struct ViewHTML {
    let context: ScreenContext?

    mutating func html(_ nodes: some Collection<ViewNode>) -> String {
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
            rows.forEachRow { row in
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
