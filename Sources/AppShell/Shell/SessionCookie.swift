import AppShellHTTP
import AppShellSessions

/// How the session id travels in a cookie: its name and attributes.
///
/// Always `Path=/; HttpOnly; SameSite=Lax`. With `secure`, the name gets the `__Host-` prefix
/// and the `Secure` attribute, so browsers only accept it over HTTPS, from this host, for `/`.
package struct SessionCookie: Sendable, Equatable {
    /// The cookie's name as sent (with the `__Host-` prefix when secure).
    package let name: String
    /// Whether the cookie is marked `Secure`.
    package let secure: Bool
    /// `name=` and the attributes, made once (a new session per cookieless request sends one).
    private let prefix: String
    private let attributes: String

    /// A cookie policy for `baseName` (e.g. `appshell_session`).
    package init(baseName: String, secure: Bool) {
        self.name = secure ? "__Host-" + baseName : baseName
        self.secure = secure
        prefix = name + "="
        attributes = "; Path=/; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// Whether `name` can be a cookie name (an RFC 9110 token).
    package static func isValidName(_ name: String) -> Bool { Request.isToken(name) }

    /// The `Set-Cookie` value that gives the client `value`. It is a session cookie (no
    /// `Max-Age`): the server's timeouts decide when the session ends.
    package func header(value: String) -> String { prefix + value + attributes }

    /// The `Set-Cookie` value that gives the client the session `id`, made in one piece.
    package func header(for id: SessionID) -> String { id.text(prefix: prefix, suffix: attributes) }

    /// Two policies are equal when they send the same cookie.
    package static func == (lhs: SessionCookie, rhs: SessionCookie) -> Bool {
        lhs.name == rhs.name && lhs.secure == rhs.secure
    }
}
