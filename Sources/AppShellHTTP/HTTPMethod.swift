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
}
