import AppShellConcurrency
import AppShellJSON
import Glibc

/// One HTTP request as a handler sees it: method, decoded path, query, headers, cookies, body.
public struct Request: Sendable {
    /// The request method.
    public let method: HTTPMethod
    /// The request target in origin form: path and query as sent, still percent-encoded. For an
    /// absolute-form target (`http://host/path?query`, RFC 9112 §3.2.2) its path and query.
    public let target: String
    /// The path's segments, each percent-decoded on its own: `/a%2Fb/c` is `["a/b", "c"]`, so an
    /// encoded slash never becomes a separator. Empty segments (from `//` or a trailing `/`) are kept.
    public let pathSegments: [String]
    /// The query's name/value pairs in order, decoded (`+` is a space).
    public let queryItems: [(name: String, value: String)]
    /// The header fields.
    public let headers: HTTPHeaders
    /// The body bytes (empty when there is none); never longer than the configured limit.
    public let body: [UInt8]
    /// The peer's IP address as text, e.g. `127.0.0.1` (formatted only when asked for): the
    /// reverse proxy's, behind one. Key anything per client on `clientAddress` instead.
    public var remoteAddress: String { address.text }
    private let address: ClientAddress
    /// The client's IP address as text: the peer's, or behind a trusted proxy the address its
    /// `X-Forwarded-For` gives (see `TrustedProxies`). Never taken from an untrusted peer's header.
    public var clientAddress: String { client.text }
    private let client: ClientAddress
    /// Whether the client (`clientAddress`) is on this machine: a loopback address.
    public var clientIsLoopback: Bool { client.ipAddress?.isLoopback ?? false }
    /// Values a router captured from `:name` segments of the matched route.
    public internal(set) var parameters: [String: String] = [:]
    /// The request's id (see `RequestID`): the client's `X-Request-ID` when it is a short token,
    /// else one the server made. The access log line and the response's `X-Request-ID` carry it;
    /// log with it to tie an app's lines to the request.
    public var requestID: String { requestIDValue.text }
    /// The id as the server holds it (a generated one's text is made when asked for).
    let requestIDValue: RequestID.Value
    /// `requestID` as the server holds it, its text not made yet: for work that may log it later
    /// (a deferred answer's failure), so that the usual success makes no string of it.
    package var heldRequestID: RequestID.Value { requestIDValue }

    /// A request from its parts; `target` must be an origin-form target (`/path?query`) or an
    /// absolute-form one (`http://host/path?query`, whose host then replaces the `Host` field).
    /// Throws 400 when the target is neither or does not decode.
    package init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1"
    ) throws(HTTPError) {
        try self.init(
            method: method, target: target, headers: headers, body: body, address: ClientAddress(text: remoteAddress))
    }

    /// A request whose client address is still in binary form; its id is the `X-Request-ID` of
    /// `headers` when acceptable, else a new one.
    init(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], address: ClientAddress
    ) throws(HTTPError) {
        self.init(
            method: method, target: target, parts: try Request.parse(method: method, target: target), headers: headers,
            body: body, address: address, requestID: RequestID.Value(headers[RequestID.headerName]))
    }

    /// A request from parts already checked by `parse(method:target:)`. Not throwing, it is
    /// built where it is used: the server hands it on without a copy.
    init(
        method: HTTPMethod, target: String, parts: Parts,
        headers: HTTPHeaders, body: [UInt8], address: ClientAddress, client: ClientAddress? = nil,
        requestID: RequestID.Value
    ) {
        self.method = method
        self.requestIDValue = requestID
        self.body = body
        self.address = address
        self.client = client ?? address
        pathSegments = parts.segments
        queryItems = parts.query
        guard let absolute = parts.absolute else {
            self.target = target
            self.headers = headers
            return
        }
        // RFC 9112 §3.2.2: the target's authority is the host, whatever the `Host` field said.
        self.target = absolute.originForm
        var headers = headers
        headers.replaceOrAdd(name: "Host", value: absolute.authority)
        self.headers = headers
    }

    /// The host the request is for, as `host[:port]`: the authority of an absolute-form target
    /// (which replaced the `Host` field), else the `Host` field; `nil` when there is neither.
    public var host: String? { headers["Host"] }

    /// Checks the method and splits the target into decoded path segments and query pairs;
    /// 400 when either is not valid.
    static func parse(method: HTTPMethod, target: String) throws(HTTPError) -> Parts {
        guard Request.isToken(method.rawValue) else {
            throw .badRequest("the method is not a valid token")
        }
        // A tunnel request (its target is `host:port`): this server is no proxy.
        if method == .connect { throw .notImplemented(method) }
        // The few targets every client asks for again and again are split once.
        let remembered = target.utf8.count <= Request.rememberedTargetLength
        if remembered, let parts = recentTargets.withLock({ $0[target] }) { return parts }
        var text = target
        let parts = try text.withUTF8({ Request.parseTarget($0) }).get()
        if remembered {
            recentTargets.withLock { recent in
                if recent.count >= Request.rememberedTargets { recent.removeAll(keepingCapacity: true) }
                recent[target] = parts
            }
        }
        return parts
    }

    /// A target's decoded path segments and query pairs, and for an absolute-form target its
    /// authority and its path and query as an origin-form target.
    typealias Parts = (
        segments: [String], query: [(name: String, value: String)],
        absolute: (authority: String, originForm: String)?
    )

    /// Targets up to this many bytes have their parts remembered, at most this many at a time
    /// (the memory is forgotten whole when full, so a flood of distinct targets costs nothing more).
    private static let rememberedTargetLength = 64
    private static let rememberedTargets = 64
    private static let recentTargets = Locked<[String: Parts]>([:])

    /// Splits an origin-form or absolute-form target into decoded path segments and query pairs,
    /// reading its bytes once (this runs for every request).
    private static func parseTarget(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> Result<Parts, HTTPError> {
        var pathStart = 0
        var absolute: (authority: String, originForm: String)?
        if bytes.first != UInt8(ascii: "/") {
            switch absoluteForm(bytes) {
            case .failure(let error): return .failure(error)
            case .success(let (authority, start)):
                pathStart = start
                let rest = String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self)
                // The byte, not `hasPrefix`: `/` and a combining mark after it are one Character.
                let rooted = start < bytes.count && bytes[start] == UInt8(ascii: "/")
                absolute = (authority, rooted ? rest : "/" + rest)
            }
        }
        var segments: [String] = []
        segments.reserveCapacity(4)
        // An absolute-form target's empty path is `/`.
        let pathBegins = pathStart < bytes.count && bytes[pathStart] == UInt8(ascii: "/")
        var start = pathBegins ? pathStart + 1 : pathStart
        var index = start
        while true {
            let atEnd = index == bytes.count || bytes[index] == UInt8(ascii: "?")
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                guard
                    let segment = PercentEncoding.decode(
                        UnsafeBufferPointer(rebasing: bytes[start..<index]), plusIsSpace: false)
                else {
                    return .failure(.badRequest("the path has a malformed percent escape, invalid UTF-8 or a NUL byte"))
                }
                segments.append(segment)
                start = index + 1
            }
            if atEnd { break }
            index += 1
        }
        guard index < bytes.count else { return .success((segments, [], absolute)) }
        guard let query = PercentEncoding.decodePairs(UnsafeBufferPointer(rebasing: bytes[(index + 1)...])) else {
            return .failure(.badRequest("the query has a malformed percent escape, invalid UTF-8 or a NUL byte"))
        }
        return .success((segments, query, absolute))
    }

    /// The authority of an absolute-form target (`http://host[:port]/path?query`, RFC 9112
    /// §3.2.2) and where its path begins; 400 when the target is not one, names another scheme,
    /// has no host or carries user information (RFC 9110 §4.2.4).
    private static func absoluteForm(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> Result<(authority: String, pathStart: Int), HTTPError> {
        func hasPrefix(_ prefix: String) -> Bool {
            let prefix = Array(prefix.utf8)
            guard bytes.count >= prefix.count else { return false }
            // Schemes compare without regard to case (RFC 3986 §3.1).
            return zip(bytes, prefix).allSatisfy { byte, wanted in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 == wanted : byte == wanted
            }
        }
        let authorityStart: Int
        if hasPrefix("http://") {
            authorityStart = 7
        } else if hasPrefix("https://") {
            authorityStart = 8
        } else {
            return .failure(.badRequest("the request target must be a path starting with '/' or an http(s) URL"))
        }
        var end = authorityStart
        while end < bytes.count && bytes[end] != UInt8(ascii: "/") && bytes[end] != UInt8(ascii: "?") {
            let byte = bytes[end]
            if byte == UInt8(ascii: "@") {
                return .failure(.badRequest("the request target must not carry user information"))
            }
            let allowed: Bool
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                allowed = true
            default: allowed = "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
            }
            guard allowed else { return .failure(.badRequest("the request target's host is not a valid authority")) }
            end += 1
        }
        guard end > authorityStart else { return .failure(.badRequest("the request target's URL has no host")) }
        let authority = String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityStart..<end]), as: UTF8.self)
        return .success((authority, end))
    }

    /// Whether `text` is a token (RFC 9110 §5.6.2): what methods and cookie names must be.
    public static func isToken(_ text: String) -> Bool {
        // The methods nearly every request uses, compared as whole strings first.
        if text == "GET" || text == "POST" || text == "HEAD" { return true }
        return !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// The decoded path, segments joined with `/` (for logs and simple matching).
    public var path: String { "/" + pathSegments.joined(separator: "/") }

    /// The first query value named `name`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The media type of the body without parameters, lowercased (`application/json`).
    public var contentType: String? {
        guard let header = headers["Content-Type"] else { return nil }
        let type = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? header
        return type.trimmingSpaces().lowercased()
    }

    /// The body decoded as JSON; 415 when it is not declared `application/json`, 400 when it does
    /// not parse (the message says where).
    public func decodeJSON() throws(HTTPError) -> JSON {
        guard hasContentType("application/json") else {
            throw HTTPError(.unsupportedMediaType, "the body must be sent as Content-Type: application/json")
        }
        do {
            return try JSON(parsing: body)
        } catch {
            throw .badRequest("the body is not valid JSON: \(error)")
        }
    }

    /// The body decoded as `application/x-www-form-urlencoded` fields; 415 for another content
    /// type, 400 when malformed. A repeated field keeps its first value.
    public func decodeForm() throws(HTTPError) -> [String: String] {
        guard hasContentType("application/x-www-form-urlencoded") else {
            throw HTTPError(
                .unsupportedMediaType, "the body must be sent as Content-Type: application/x-www-form-urlencoded")
        }
        guard let pairs = body.withUnsafeBufferPointer({ PercentEncoding.decodePairs($0) }) else {
            throw .badRequest("the form body has a malformed percent escape, invalid UTF-8 or a NUL byte")
        }
        return Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `contentType` is `expected` (lowercase ASCII), compared on the field's bytes: what
    /// every action's body is checked with, without splitting, trimming and lowercasing a string
    /// (10 000 of an action's instructions, callgrind, the Performance article).
    func hasContentType(_ expected: StaticString) -> Bool {
        guard var field = headers["Content-Type"] else { return false }
        return field.withUTF8 { bytes in
            let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            // As `contentType` splits the field: empty pieces before the first `;` are skipped.
            var start = 0
            while start < bytes.count, bytes[start] == UInt8(ascii: ";") { start += 1 }
            var end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            while start < end, isSpace(bytes[start]) { start += 1 }
            while end > start, isSpace(bytes[end - 1]) { end -= 1 }
            guard end - start == expected.utf8CodeUnitCount else { return false }
            for offset in 0..<(end - start) {
                var byte = bytes[start + offset]
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
                if byte != expected.utf8Start[offset] { return false }
            }
            return true
        }
    }

    /// Whether the client prefers an HTML answer (a browser navigation) to JSON.
    public var prefersHTML: Bool {
        guard let accept = headers["Accept"] else { return false }
        return accept.contains("text/html")
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String { String(Substring(self).trimmingSpacesSubstring()) }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs, as a substring.
    func trimmingSpacesSubstring() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
