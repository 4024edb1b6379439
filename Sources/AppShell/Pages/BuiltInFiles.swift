import AppShellHTTP

/// The shell's page script (`Resources/app.js`: it sends each form as JSON, follows the event
/// stream, and learns from the page's markup which actions mean back, close and launch), built
/// into the framework so that an app serves it without a copy. `ShellServer` serves it from memory
/// at `/app.js`, and `PageChrome` loads it on every page by default. The package compiles the
/// file in (`resources: [.embedInCode(…)]`).
public enum PageScript {
    /// The script's file name, and its URL path (`/app.js`) with the content version after it.
    public static let fileName = "app.js"
    /// The script's bytes, as served.
    public static let bytes = PackageResources.app_js
    /// The content version of the script (a short hash of its bytes): its URL's `?v=` and its `ETag`.
    public static let version = AssetVersions.hash(bytes)
    /// The path the script is served at.
    public static var path: String { "/" + fileName }
}

/// The framework's base stylesheet (`Resources/appshell.css`): it styles the markup the framework
/// writes — the app bar, screens and their navigation title and toolbar, sections, lists, forms,
/// buttons and their styles, messages, the modal sheet, the page script's banner, the
/// transitions (with reduced motion) and dark mode — so that an app needs no CSS to look right;
/// an app's own stylesheets, linked after it, style its own pieces and may override its CSS
/// variables. Built into the framework like the page script: `ShellServer` serves it from memory
/// at `/appshell.css`, and `PageChrome` links it on every page, first, by default.
public enum BaseStylesheet {
    /// The stylesheet's file name, and its URL path (`/appshell.css`) with the content version
    /// after it.
    public static let fileName = "appshell.css"
    /// The stylesheet's bytes, as served.
    public static let bytes = PackageResources.appshell_css
    /// The content version of the stylesheet (a short hash of its bytes): its URL's `?v=` and its
    /// `ETag`.
    public static let version = AssetVersions.hash(bytes)
    /// The path the stylesheet is served at.
    public static var path: String { "/" + fileName }
}

/// Answers `GET` and `HEAD` for a file built into the framework (the page script, the base
/// stylesheet) from memory, with the headers a static file gets: `Content-Type`, an `ETag` (the
/// content version), `Cache-Control` (a year and `immutable` at the versioned URL, else the static
/// files' max-age) and `X-Content-Type-Options`; a matching `If-None-Match` gets 304.
struct BuiltInFileResponder: HTTPResponder {
    /// The file's name (its content type comes from it).
    let fileName: String
    /// The file's bytes.
    let bytes: [UInt8]
    /// `Cache-Control: max-age` in seconds at the unversioned URL.
    let maxAge: Int
    private let etag: String

    init(fileName: String, bytes: [UInt8], version: String, maxAge: Int) {
        self.fileName = fileName
        self.bytes = bytes
        self.maxAge = maxAge
        etag = "\"\(version)\""
    }

    /// The responder of the page script.
    static func pageScript(maxAge: Int) -> BuiltInFileResponder {
        BuiltInFileResponder(
            fileName: PageScript.fileName, bytes: PageScript.bytes, version: PageScript.version, maxAge: maxAge)
    }

    /// The responder of the base stylesheet.
    static func baseStylesheet(maxAge: Int) -> BuiltInFileResponder {
        BuiltInFileResponder(
            fileName: BaseStylesheet.fileName, bytes: BaseStylesheet.bytes, version: BaseStylesheet.version,
            maxAge: maxAge)
    }

    func respond(to request: Request) throws -> Response {
        let versioned = request.query("v") != nil
        var headers: HTTPHeaders = [
            "ETag": etag,
            "Cache-Control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=\(maxAge)",
            "X-Content-Type-Options": "nosniff",
        ]
        if let match = request.headers["If-None-Match"], matches(match) {
            return .notModified(headers: headers, length: bytes.count)
        }
        headers.add(name: "Content-Type", value: MediaType.forFile(fileName))
        return Response(status: .ok, headers: headers, body: .bytes(bytes))
    }

    func acceptsBody(_ request: Request) -> Bool { false }

    /// Whether an `If-None-Match` list names this version (weak or strong) or is `*`.
    private func matches(_ field: String) -> Bool {
        field.split(separator: ",").contains { candidate in
            let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            var tag = candidate.drop(while: isSpace)
            while let last = tag.last, isSpace(last) { tag = tag.dropLast() }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            return tag == "*" || tag == Substring(etag)
        }
    }
}
