/// An HTTP status code. libmicrohttpd writes the reason phrase itself.
public struct HTTPStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The three-digit code.
    public let rawValue: Int

    /// A status from its code.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The code as text.
    public var description: String { String(rawValue) }

    /// 200 OK.
    public static let ok = HTTPStatus(rawValue: 200)
    /// 201 Created.
    public static let created = HTTPStatus(rawValue: 201)
    /// 204 No Content.
    public static let noContent = HTTPStatus(rawValue: 204)
    /// 301 Moved Permanently.
    public static let movedPermanently = HTTPStatus(rawValue: 301)
    /// 303 See Other.
    public static let seeOther = HTTPStatus(rawValue: 303)
    /// 304 Not Modified.
    public static let notModified = HTTPStatus(rawValue: 304)
    /// 400 Bad Request.
    public static let badRequest = HTTPStatus(rawValue: 400)
    /// 401 Unauthorized: credentials are needed (sent with `WWW-Authenticate`).
    public static let unauthorized = HTTPStatus(rawValue: 401)
    /// 403 Forbidden.
    public static let forbidden = HTTPStatus(rawValue: 403)
    /// 404 Not Found.
    public static let notFound = HTTPStatus(rawValue: 404)
    /// 405 Method Not Allowed.
    public static let methodNotAllowed = HTTPStatus(rawValue: 405)
    /// 409 Conflict.
    public static let conflict = HTTPStatus(rawValue: 409)
    /// 413 Content Too Large.
    public static let contentTooLarge = HTTPStatus(rawValue: 413)
    /// 421 Misdirected Request: the server does not serve the host the request names.
    public static let misdirectedRequest = HTTPStatus(rawValue: 421)
    /// 415 Unsupported Media Type.
    public static let unsupportedMediaType = HTTPStatus(rawValue: 415)
    /// 429 Too Many Requests.
    public static let tooManyRequests = HTTPStatus(rawValue: 429)
    /// 500 Internal Server Error.
    public static let internalServerError = HTTPStatus(rawValue: 500)
    /// 501 Not Implemented.
    public static let notImplemented = HTTPStatus(rawValue: 501)
    /// 503 Service Unavailable.
    public static let serviceUnavailable = HTTPStatus(rawValue: 503)
}
