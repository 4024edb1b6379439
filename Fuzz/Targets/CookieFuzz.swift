import AppShellSessions

@testable import AppShellHTTP

/// The `Cookie` header fields (each input line one field, as bytes: a client may send any) and
/// the session id read from a cookie's bytes.
public enum CookieFuzz {
    /// Every cookie `cookies` lists is what `cookie(named:)` finds; names are non-empty and
    /// trimmed, neither holds `;`; a value that parses as a session id gives that id's text back.
    public static func run(_ data: [UInt8]) {
        var headers = HTTPHeaders()
        for line in FuzzCheck.lines(data) {
            Array(line).withUnsafeBufferPointer { value in
                Array("Cookie".utf8).withUnsafeBufferPointer { name in headers.receive(name: name, value: value) }
            }
        }
        let request = try! Request(method: .get, target: "/", headers: headers)
        let cookies = request.cookies
        // A name that is not UTF-8 is one `cookies` repairs (to U+FFFD), and `cookie(named:)`
        // compares bytes: only the others can be looked up by the name `cookies` gives. (Scalars,
        // not Characters: U+FFFD and a combining mark after it are one Character.)
        for (name, value) in cookies where !name.unicodeScalars.contains("\u{FFFD}") {
            FuzzCheck.require(!name.isEmpty, "an empty cookie name")
            FuzzCheck.require(!name.utf8.contains(UInt8(ascii: ";")), "a cookie name holds ;")
            FuzzCheck.require(!value.utf8.contains(UInt8(ascii: ";")), "a cookie value holds ;")
            FuzzCheck.require(
                name.utf8.first != UInt8(ascii: " ") && name.utf8.last != UInt8(ascii: " "), "an untrimmed name")
            FuzzCheck.require(request.cookie(named: name) == value, "cookie(named: \(name)) is not cookies[\(name)]")
            var presented: SessionID?
            request.withCookie(named: name) { presented = SessionID(utf8: $0) }
            if let presented {
                FuzzCheck.require(presented.text == value, "a session id's text is not the cookie it came from")
                FuzzCheck.require(SessionID(value) == presented, "the session id parses differently from a string")
            } else {
                FuzzCheck.require(SessionID(value) == nil, "a string parses as a session id its bytes did not")
            }
        }
    }
}
