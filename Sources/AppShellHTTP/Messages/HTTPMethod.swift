/// An HTTP request method such as `GET` or `POST`, compared by its exact (case-sensitive) token.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the request line.
    public let rawValue: String

    /// A method from its token.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The token, e.g. `GET`.
    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: answered like `GET`, libmicrohttpd leaves out the body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`.
    public static let trace = HTTPMethod(rawValue: "TRACE")
    /// `CONNECT`.
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `QUERY`: a safe, idempotent request with content (the IETF's QUERY method).
    public static let query = HTTPMethod(rawValue: "QUERY")

    /// Whether RFC 9110 (or RFC 5789, `PATCH`, or the IETF's `QUERY`) defines the method. A
    /// server answers a method it does not recognise with 501 rather than 405 (RFC 9110 §9.1),
    /// and one it recognises but a path does not allow with 405 and `Allow`.
    public var isStandard: Bool {
        switch rawValue {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "QUERY": return true
        default: return false
        }
    }

    /// Whether a request with this method carries content with a meaning (RFC 9110 §9.3: a
    /// `GET`, `HEAD`, `DELETE` or `TRACE` body has none): what a route accepts unless it says.
    var carriesContent: Bool {
        switch rawValue {
        case "GET", "HEAD", "DELETE", "TRACE": return false
        default: return true
        }
    }
}
