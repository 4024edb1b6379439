import CMicroHTTPD

// How the server turns a `Response` into libmicrohttpd's: bodies in memory, files, answers without
// a body, and the admission of event streams.

/// The body reader of a response that has none to send (a 304's, a `HEAD` of a stream's):
/// libmicrohttpd never calls it for those; if it did, it would end the connection rather than send
/// bytes.
private let readNoBody: MHD_ContentReaderCallback = { _, _, _, _ in
    -2  // MHD_CONTENT_READER_END_WITH_ERROR
}

/// A response body lent to libmicrohttpd instead of copied: the array (and with it the bytes
/// libmicrohttpd sends from) is kept alive until libmicrohttpd frees the response.
private final class LentBytes {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// Called when libmicrohttpd frees a response whose body was lent: the body is let go.
private let lentBytesReleased: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<LentBytes>.fromOpaque(cls).release()
}

extension HTTPServer {
    /// The buffer libmicrohttpd allocates with each event stream's response (and keeps while the
    /// stream is open). A chunked body — any HTTP/1.1 client's — is read straight into the
    /// connection's own memory and never uses it; only an HTTP/1.0 client's body, sent as it is
    /// and ended by closing, goes out through it, in pieces of this size. 4 096 bytes here were a
    /// fifth of what an open stream held.
    static let streamBlockBytes = 256

    /// Admits `stream` to be sent on `connection` and binds it; otherwise ends it (so that whatever
    /// subscribed it lets it go) and returns the answer to send instead.
    func admit(_ stream: EventStream, on connection: OpaquePointer, _ pending: PendingRequest) -> Response? {
        // Counted by client: an IPv6 peer by its /64.
        let address = ClientAddress(appshell_mhd_client_address(connection)).clientText
        let refusal: HTTPError
        let socket = appshell_mhd_connection_fd(connection)
        switch streams.admit(stream, address: address, socket: socket) {
        case .admitted:
            stream.attach(connection, socket: socket, backlogLimit: configuration.eventStreamBacklogBytes)
            return nil
        case .refusedInAll:
            pending.errorCause = .streamLimit
            refusal = HTTPError(
                .serviceUnavailable, "too many open event streams (\(streams.limit)); try again later",
                headers: ["Retry-After": "10"])
        case .refusedForAddress:
            refusal = HTTPError(
                .tooManyRequests,
                "too many open event streams from \(address) (\(streams.limitPerAddress)); close some or try again later",
                headers: ["Retry-After": "10"])
        case .refusedShuttingDown:
            pending.errorCause = .shuttingDown
            refusal = HTTPError(.serviceUnavailable, "the server is shutting down", headers: ["Retry-After": "5"])
        }
        stream.discard()
        // A client refused a stream would otherwise hold the connection it asked on, and an
        // `EventSource` asks again on a new one.
        var response = Response.error(refusal, for: nil)
        response.headers.add(name: "Connection", value: "close")
        return response
    }

    /// A libmicrohttpd response for a body in memory or a file, with its headers; `nil` for a
    /// stream (which needs its connection) or when libmicrohttpd cannot make one.
    static func makeResponse(_ response: Response) -> OpaquePointer? {
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            if response.status == .notModified {
                made = headersOnlyResponse(length: response.headers["Content-Length"].flatMap { UInt64($0) })
            } else if bytes.isEmpty {
                made = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
            } else {
                // Lent, not copied: copying an action's 2 500-byte answer (a malloc, the copy, a
                // free) was 1 200 of its instructions (callgrind, the Performance article). The array's
                // storage does not move while `lent` holds it, and nothing writes to it.
                let lent = Unmanaged.passRetained(LentBytes(bytes))
                let start = lent.takeUnretainedValue().bytes.withUnsafeBytes {
                    UnsafeMutableRawPointer(mutating: $0.baseAddress)
                }
                made = MHD_create_response_from_buffer_with_free_callback_cls(
                    bytes.count, start, lentBytesReleased, lent.toOpaque())
                // Not made: libmicrohttpd has not taken the body, and will not call back.
                if made == nil { lent.release() }
            }
        case .file(let file):
            made = file.handOver { MHD_create_response_from_fd(file.size, $0) }
        case .stream, .deferred:
            made = nil
        }
        if let made { addHeaders(response.headers, to: made) }
        return made
    }

    /// A libmicrohttpd response that sends its header block only: a 304's, or a `HEAD` answer's
    /// whose `GET` has no length (an event stream). libmicrohttpd writes `Content-Length` from the
    /// response's size (it never sends the body of these), and RFC 9110 §8.6 allows only the length
    /// of the representation a 200 to `GET` would send: so the response has that size, and no
    /// bytes. Without a known length the response has none, and none is written (the connection
    /// then closes: that is how libmicrohttpd 0.9.75 frames a response without a length when
    /// chunking is off; a chunked one would send its last chunk, `0\r\n\r\n`, even to `HEAD`).
    static func headersOnlyResponse(length: UInt64?) -> OpaquePointer? {
        guard let length else {
            let made = MHD_create_response_from_callback(appshell_mhd_size_unknown, 1, readNoBody, nil, nil)
            if let made { _ = appshell_mhd_set_response_flags(made, .RF_HTTP_1_0_COMPATIBLE_STRICT) }
            return made
        }
        return MHD_create_response_from_callback(length, 1, readNoBody, nil, nil)
    }

    /// HTTPS: adds `Strict-Transport-Security` to `made` unless `headers` (the handler's) set it.
    func addStrictTransportSecurity(to made: OpaquePointer, unlessIn headers: HTTPHeaders) {
        guard let value = strictTransportSecurity, headers["Strict-Transport-Security"] == nil else { return }
        value.withUnsafeBufferPointer { _ = MHD_add_response_header(made, "Strict-Transport-Security", $0.baseAddress) }
    }

    /// Adds `headers` to a libmicrohttpd response, and the `SecurityHeaders` they lack;
    /// `Content-Length` is libmicrohttpd's to set.
    static func addHeaders(_ headers: HTTPHeaders, to made: OpaquePointer) {
        for field in headers.storage where !HTTPHeaders.equalNames(field.name, "Content-Length") {
            // withCString lends the string's own bytes when it can (no copy to a C array).
            field.name.withCString { name in
                field.value.withCString { value in _ = MHD_add_response_header(made, name, value) }
            }
        }
        SecurityHeaders.forEachMissing(in: headers) { _ = MHD_add_response_header(made, $0, $1) }
    }
}
