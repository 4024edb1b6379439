/// The header fields every answer carries unless it sets them itself: `X-Content-Type-Options:
/// nosniff` on all, and on HTML a Content-Security-Policy without inline script or style, no
/// framing and a same-origin referrer (what an app's pages carry). So an error page, a JSON answer
/// or an app's own `.html(…)` cannot be sniffed into script, framed, or run injected inline code.
///
/// They are added where each libmicrohttpd response gets its header fields, from static strings:
/// a prepared response carries them in the fields it was made with, and a connection that sends it
/// again adds nothing; another answer's libmicrohttpd response copies them as it copies its other
/// fields. Nothing of this allocates in Swift.
package enum SecurityHeaders {
    /// The policy of HTML answers that set none of their own: resources from the site only, no
    /// inline script or style, no framing, no `<base>`, forms to the site only.
    package static let contentSecurityPolicy = String(describing: cPolicyLiteral)

    private static let cPolicyLiteral: StaticString = """
        default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
        worker-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        """

    /// One field of the baseline: its name and value as C strings, and whether only HTML gets it.
    private struct Field {
        let name: StaticString
        let value: StaticString
        let htmlOnly: Bool
    }

    private static let fields: [Field] = [
        Field(name: "X-Content-Type-Options", value: "nosniff", htmlOnly: false),
        Field(name: "Content-Security-Policy", value: cPolicyLiteral, htmlOnly: true),
        Field(name: "X-Frame-Options", value: "DENY", htmlOnly: true),
        Field(name: "Referrer-Policy", value: "same-origin", htmlOnly: true),
    ]

    /// Calls `add` with the name and value (NUL-terminated, static) of each baseline field that
    /// `headers` lacks.
    static func forEachMissing(
        in headers: HTTPHeaders, _ add: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void
    ) {
        let fields = Self.fields
        var present = 0  // a bit per field of `fields`
        var html = false
        for field in headers.storage {
            if HTTPHeaders.equalNames(field.name, "Content-Type") {
                html = field.value.utf8.starts(with: "text/html".utf8)
                continue
            }
            var name = field.name
            name.withUTF8 { name in
                for index in fields.indices
                where fields[index].name.withUTF8Buffer({ HTTPHeaders.equalNames(name, $0) }) {
                    present |= 1 << index
                }
            }
        }
        for index in fields.indices where present & (1 << index) == 0 && (html || !fields[index].htmlOnly) {
            add(cString(fields[index].name), cString(fields[index].value))
        }
    }

    /// `headers` with the baseline fields it lacks (for answers made without libmicrohttpd).
    static func adding(to headers: HTTPHeaders) -> HTTPHeaders {
        var result = headers
        forEachMissing(in: headers) { name, value in
            result.add(name: String(cString: name), value: String(cString: value))
        }
        return result
    }

    /// A literal's bytes as a C string (Swift stores string literals NUL-terminated).
    private static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
