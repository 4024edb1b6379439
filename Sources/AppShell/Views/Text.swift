/// Text: a paragraph, or a heading with `.font(.headline)` — SwiftUI's `Text`.
public struct Text: View, PrimitiveView {
    let string: String
    var textFont: Font = .body
    var isSecondary = false

    /// `string`, shown as written (the renderers escape it).
    public init(_ string: String) { self.string = string }

    /// The same text in `font`.
    public func font(_ font: Font) -> Text {
        var text = self
        text.textFont = font
        return text
    }

    /// The same text, less prominent (SwiftUI's `.foregroundStyle(.secondary)`).
    public func secondary() -> Text {
        var text = self
        text.isSecondary = true
        return text
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.text(string, font: textFont, secondary: isSecondary)) }
}

/// How prominent a `Text` is.
public enum Font: String, Sendable, Equatable {
    /// A paragraph.
    case body
    /// A section's heading (`<h2>`).
    case headline
    /// Small print.
    case caption
}

/// A message the page announces to the user when it appears (`role="alert"`): why an action was
/// refused, what went wrong. `GET /api/state` gives it as `view.message` too.
public struct Message: View, PrimitiveView {
    let text: String

    /// The message `text`.
    public init(_ text: String) { self.text = text }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.message(text)) }
}

/// HTML the app writes itself, put in the page as it is — not escaped, not in the JSON's `view`.
/// The escape hatch for what no view shows; everything in it is the app's to escape.
public struct RawHTML: View, PrimitiveView {
    let html: String

    /// `html`, unescaped.
    public init(_ html: String) { self.html = html }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) { nodes.append(.raw(html)) }
}

/// A file of the public directory shown as an image (its URL carries the file's version).
public struct Image: View, PrimitiveView {
    let file: String
    let label: String?
    var width: Int?
    var height: Int?

    /// The image in the public directory's `file`, described by `label` for those who cannot see it.
    public init(_ file: String, label: String) {
        self.file = file
        self.label = label
    }

    /// The image in `file`, decorative: assistive technology skips it.
    public init(decorative file: String) {
        self.file = file
        label = nil
    }

    /// The same image at `width` × `height` CSS pixels.
    public func frame(width: Int? = nil, height: Int? = nil) -> Image {
        var image = self
        image.width = width
        image.height = height
        return image
    }

    /// A primitive view.
    public var body: Never { return noBody() }

    func append(to nodes: inout ViewNodes) {
        nodes.append(.image(file: file, label: label, width: width, height: height))
    }
}
