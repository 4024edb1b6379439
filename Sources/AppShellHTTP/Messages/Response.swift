import AppShellJSON

/// What a handler answers: a status, header fields and a body.
public struct Response: Sendable {
    /// The status code.
    public var status: HTTPStatus
    /// The header fields; `Content-Length` is set by the server (a 304 states it with
    /// `notModified(headers:length:)`).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// The prepared response this one started as (see `PreparedResponse`).
    var prepared: PreparedResponse?

    /// Where a response's bytes come from.
    public enum Body: Sendable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// An open regular file, sent with sendfile(2); the server closes it.
        case file(OpenFile)
        /// Server-sent events, for as long as the stream stays open.
        case stream(EventStream)
        /// An answer that comes later (see `Response.deferred`).
        case deferred(PendingResponse)

        /// The number of bytes the body has (0 for a stream, whose length is not known, and a
        /// deferred answer).
        public var count: Int {
            switch self {
            case .bytes(let bytes): return bytes.count
            case .file(let file): return file.size
            case .stream, .deferred: return 0
            }
        }
    }

    /// A response with the given parts.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response from ready-made UTF-8 bytes (`Cache-Control: no-store`: state is live).
    public static func json(bytes: [UInt8], status: HTTPStatus = .ok) -> Response {
        Response(
            status: status,
            headers: ["Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"],
            body: .bytes(bytes))
    }

    /// A JSON response from a value.
    public static func json(_ value: JSON, status: HTTPStatus = .ok) -> Response {
        json(bytes: value.serialized, status: status)
    }

    /// An HTML response.
    public static func html(_ text: String, status: HTTPStatus = .ok) -> Response {
        Response(
            status: status,
            headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"],
            body: .bytes(Array(text.utf8)))
    }

    /// A plain-text response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> Response {
        Response(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }

    /// A `text/event-stream` response that sends `stream`.
    public static func events(_ stream: EventStream) -> Response {
        Response(
            status: .ok,
            headers: [
                "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
            ],
            body: .stream(stream))
    }

    /// A 304 Not Modified for a conditional request whose representation did not change:
    /// `headers` are those a cache updates from (`ETag`, `Cache-Control`, `Last-Modified`…) and
    /// `length` is the representation's length, sent as `Content-Length` as the 200 would send it
    /// (RFC 9110 §8.6: a 304 may carry no other). Without a length, no `Content-Length` is sent and
    /// the connection closes after the answer.
    public static func notModified(headers: HTTPHeaders, length: Int?) -> Response {
        var headers = headers
        headers.remove(name: "Content-Length")
        if let length { headers.add(name: "Content-Length", value: String(length)) }
        return Response(status: .notModified, headers: headers)
    }

    /// This response with the fields of `headers` whose names it does not carry added (a deferred
    /// response's `Set-Cookie` reaches its answer unless the answer sets its own).
    func adding(_ headers: HTTPHeaders) -> Response {
        guard !headers.storage.isEmpty else { return self }
        var response = self
        for field in headers.storage where self.headers[field.name] == nil {
            response.headers.add(name: field.name, value: field.value)
        }
        return response
    }

    /// A 303 redirect to `location` (after a form POST the browser then GETs it).
    public static func redirect(to location: String, status: HTTPStatus = .seeOther) -> Response {
        Response(status: status, headers: ["Location": location, "Cache-Control": "no-store"])
    }

    /// The response for `error`: `{"error": message}`, or a small HTML page when the request
    /// comes from a browser navigation.
    public static func error(_ error: HTTPError, for request: Request?) -> Response {
        .error(error, html: request?.prefersHTML == true)
    }

    /// The answer for `error`: an HTML page when `html` (the request prefers HTML), else JSON
    /// (`{"error": message}`), with the error's status and headers. For an answer made after its
    /// request is gone, from what the request preferred (`Request.prefersHTML`).
    public static func error(_ error: HTTPError, html: Bool) -> Response {
        var response: Response
        if html {
            let message = HTML.escape(error.message)
            response = .html(
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(error.status.rawValue)</title>"
                    + "</head><body><main><h1>\(error.status.rawValue)</h1><p>\(message)</p></main></body></html>",
                status: error.status)
        } else {
            response = .json(["error": .string(error.message)], status: error.status)
        }
        for (name, value) in error.headers.sorted(by: { $0.key < $1.key }) {
            response.headers.replaceOrAdd(name: name, value: value)
        }
        return response
    }
}

/// HTML text helpers.
public enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references.
    ///
    /// Works on the UTF-8 bytes (the five are ASCII, never part of another character's bytes): a
    /// text with none of them is returned as it is, without a copy, and another is written into
    /// one byte buffer. Appending scalar by scalar was 305 000 of the 657 000 instructions of a
    /// page made anew (callgrind, bench/RESULTS.md).
    public static func escape(_ text: String) -> String {
        let escaped = text.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard bytes.contains(where: needsReference) else { return nil }
            return referencing(bytes)
        }
        switch escaped {
        case .some(.some(let written)): return written
        case .some(.none): return text
        case .none: return referencing(Array(text.utf8))
        }
    }

    /// Whether `byte` is one of the five bytes `escape` replaces.
    @inline(__always)
    private static func needsReference(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
        default: false
        }
    }

    /// `bytes` (UTF-8) with the five replaced, as a string.
    private static func referencing(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 24)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): output.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): output.append(contentsOf: "&#39;".utf8)
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
