import AppShellHTTP

/// The shell's page script (`Public/app.js`: it sends each form as JSON, follows the event
/// stream, and learns from the page's markup which actions mean back, close and launch), built
/// into the framework so that an app serves it without a copy. `ShellServer` serves it from memory
/// at `/app.js`, and `PageChrome` loads it on every page by default.
/// `Sources/AppShell/PageScript.swift` is generated from `Public/app.js` by
/// `scripts/embed-app-js.py`.
public enum PageScript {
    /// The script's file name, and its URL path (`/app.js`) with the content version after it.
    public static let fileName = "app.js"
    /// The script's bytes, as served.
    public static let bytes = Array(source.utf8)
    /// The content version of the script (a short hash of its bytes): its URL's `?v=` and its `ETag`.
    public static let version = AssetVersions.hash(bytes)
    /// The path the script is served at.
    public static var path: String { "/" + fileName }
}

/// Answers `GET` and `HEAD` for the page script from memory, with the headers a static file gets:
/// `Content-Type`, an `ETag` (the content version), `Cache-Control` (a year and `immutable` at the
/// versioned URL, else the static files' max-age) and `X-Content-Type-Options`; a matching
/// `If-None-Match` gets 304.
struct PageScriptResponder: HTTPResponder {
    /// `Cache-Control: max-age` in seconds at the unversioned URL.
    let maxAge: Int
    private let etag = "\"\(PageScript.version)\""

    func respond(to request: Request) throws -> Response {
        let versioned = request.query("v") != nil
        var headers: HTTPHeaders = [
            "ETag": etag,
            "Cache-Control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=\(maxAge)",
            "X-Content-Type-Options": "nosniff",
        ]
        if let match = request.headers["If-None-Match"], matches(match) {
            return .notModified(headers: headers, length: PageScript.bytes.count)
        }
        headers.add(name: "Content-Type", value: MediaType.forFile(PageScript.fileName))
        return Response(status: .ok, headers: headers, body: .bytes(PageScript.bytes))
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
