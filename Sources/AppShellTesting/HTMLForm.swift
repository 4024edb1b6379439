/// A form of a page as a browser without JavaScript reads it: where it is sent, and its fields with
/// the values they start with (the hidden ones — the form's `action`, its parameters, the session's
/// `csrf` token — included). `HTTPTestClient.submit` fills it and sends it.
///
/// What it reads: `<form>` (`method`, `action`, `data-action`), `<input>` (a checkbox or radio
/// button only when `checked`), `<textarea>` and its text. Not `<select>` (no AppShell view makes
/// one), nor a submit button's own `name` (the framework's buttons have none).
public struct HTMLForm: Sendable, Equatable {
    /// One named field, in the order of the page.
    public struct Field: Sendable, Equatable {
        /// The field's `name`.
        public let name: String
        /// Its value as the page gives it: `value`, or a text area's text.
        public var value: String
        /// Its `type` (`text` when it has none; `textarea` for a text area).
        public let type: String

        /// Whether a browser keeps it out of the user's reach (it sends it as it is).
        public var isHidden: Bool { type == "hidden" }
    }

    /// `get` or `post`, lower case (`get` when the form says nothing, as in a browser).
    public let method: String
    /// Where it is sent: its `action` attribute (empty: the page's own URL).
    public let target: String
    /// The form's attributes (`data-action`, `data-role`, …), values unescaped.
    public let attributes: [String: String]
    /// Its named fields, in the order of the page.
    public let fields: [Field]

    /// The AppShell action it sends: its `action` field, else its `data-action` attribute.
    public var action: String? { value(of: "action") ?? attributes["data-action"] }

    /// The value `name` starts with, if the form has such a field.
    public func value(of name: String) -> String? { fields.first { $0.name == name }?.value }

    /// The pairs a browser sends when the user has typed `values` into the fields of those names,
    /// in the order of the page. A name the form has no field for, or a hidden field given another
    /// value, throws: no user could send that.
    public func filled(with values: [String: String]) throws -> [(String, String)] {
        for (name, value) in values {
            guard let field = fields.first(where: { $0.name == name }) else {
                throw TestClientError(description: "the form for \(action ?? target) has no field \"\(name)\"")
            }
            if field.isHidden && field.value != value {
                throw TestClientError(
                    description: "\"\(name)\" of the form for \(action ?? target) is hidden, with \"\(field.value)\"")
            }
        }
        return fields.map { ($0.name, values[$0.name] ?? $0.value) }
    }

    /// Whether its hidden fields agree with `values` (those it has: `id` = 2 picks the button of
    /// note 2 among the list's `open` buttons).
    func agrees(with values: [String: String]) -> Bool {
        fields.allSatisfy { field in !field.isHidden || values[field.name].map { $0 == field.value } ?? true }
    }

    /// `pairs` as `application/x-www-form-urlencoded`, as a browser encodes them (a space is `+`).
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { encodeComponent($0.0) + "=" + encodeComponent($0.1) }.joined(separator: "&")
    }

    private static func encodeComponent(_ text: String) -> String {
        var output = ""
        let hex = Array("0123456789ABCDEF".unicodeScalars)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                output += "+"
            default:
                output.unicodeScalars.append("%")
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }

    /// Every form of `html`, in the order of the page.
    public static func forms(in html: String) -> [HTMLForm] {
        var scanner = HTMLScanner(html)
        var forms: [HTMLForm] = []
        while let form = scanner.next(tag: "form") {
            let end = scanner.find("</form>") ?? scanner.end
            var inner = HTMLScanner(scanner.text(upTo: end))
            scanner.move(to: end)
            var fields: [Field] = []
            while let (tag, attributes) = inner.nextTag(among: ["input", "textarea"]) {
                guard let name = attributes["name"] else { continue }
                if tag == "textarea" {
                    let close = inner.find("</textarea>") ?? inner.end
                    var text = HTMLScanner.unescape(inner.text(upTo: close))
                    // A browser drops the newline that follows the opening tag.
                    if text.hasPrefix("\n") { text.removeFirst() }
                    inner.move(to: close)
                    fields.append(Field(name: name, value: text, type: "textarea"))
                    continue
                }
                let type = attributes["type"]?.lowercased() ?? "text"
                if ["submit", "button", "reset", "image", "file"].contains(type) { continue }
                if ["checkbox", "radio"].contains(type) && attributes["checked"] == nil { continue }
                let fallback = ["checkbox", "radio"].contains(type) ? "on" : ""
                fields.append(Field(name: name, value: attributes["value"] ?? fallback, type: type))
            }
            forms.append(
                HTMLForm(
                    method: form["method"]?.lowercased() ?? "get", target: form["action"] ?? "", attributes: form,
                    fields: fields))
        }
        return forms
    }
}

/// A forward scanner over a page's text: tags, their attributes, and the text between.
struct HTMLScanner {
    private let characters: [Character]
    private var position = 0

    init(_ text: String) { characters = Array(text) }

    /// The end of the text.
    var end: Int { characters.count }

    /// Where `marker` (lower case) next starts, case-insensitively, if anywhere.
    func find(_ marker: String) -> Int? {
        let wanted = Array(marker)
        guard wanted.count <= characters.count else { return nil }
        var index = position
        while index + wanted.count <= characters.count {
            if (0..<wanted.count).allSatisfy({ Self.same(characters[index + $0], wanted[$0]) }) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Whether `character` is `lower`, or its upper case.
    private static func same(_ character: Character, _ lower: Character) -> Bool {
        character == lower || (character.isUppercase && character.lowercased() == String(lower))
    }

    /// The text from here to `index`.
    func text(upTo index: Int) -> String { String(characters[position..<max(position, index)]) }

    /// Moves to `index`.
    mutating func move(to index: Int) { position = index }

    /// The attributes of the next `<name …>` tag, past it.
    mutating func next(tag name: String) -> [String: String]? { nextTag(among: [name])?.attributes }

    /// The next tag named one of `names` and its attributes, past it.
    mutating func nextTag(among names: [String]) -> (name: String, attributes: [String: String])? {
        while let open = find("<") {
            position = open + 1
            var tag = ""
            while position < end, characters[position].isLetter {
                tag += characters[position].lowercased()
                position += 1
            }
            guard names.contains(tag) else { continue }
            return (tag, attributes())
        }
        position = end
        return nil
    }

    /// The attributes up to the tag's `>`, past it; names lower case, values unescaped.
    private mutating func attributes() -> [String: String] {
        var attributes: [String: String] = [:]
        while position < end {
            while position < end, characters[position].isWhitespace || characters[position] == "/" { position += 1 }
            guard position < end, characters[position] != ">" else { break }
            var name = ""
            while position < end, !characters[position].isWhitespace, !"=>/".contains(characters[position]) {
                name += characters[position].lowercased()
                position += 1
            }
            while position < end, characters[position].isWhitespace { position += 1 }
            guard position < end, characters[position] == "=" else {
                attributes[name] = ""
                continue
            }
            position += 1
            while position < end, characters[position].isWhitespace { position += 1 }
            var value = ""
            if position < end, characters[position] == "\"" || characters[position] == "'" {
                let quote = characters[position]
                position += 1
                while position < end, characters[position] != quote {
                    value.append(characters[position])
                    position += 1
                }
                position += 1
            } else {
                while position < end, !characters[position].isWhitespace, characters[position] != ">" {
                    value.append(characters[position])
                    position += 1
                }
            }
            attributes[name] = Self.unescape(value)
        }
        position = min(position + 1, end)
        return attributes
    }

    /// `text` with its character references (`&amp;`, `&#39;`, `&#x2F;`) replaced.
    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
        var output = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            output += rest[..<ampersand]
            rest = rest[rest.index(after: ampersand)...]
            guard let semicolon = rest.prefix(10).firstIndex(of: ";") else {
                output += "&"
                continue
            }
            let name = rest[..<semicolon]
            var replacement: String?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                replacement = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
            } else if name.hasPrefix("#") {
                replacement = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
            } else {
                replacement = named[String(name)]
            }
            if let replacement {
                output += replacement
                rest = rest[rest.index(after: semicolon)...]
            } else {
                output += "&"
            }
        }
        return output + rest
    }
}
