import CMicroHTTPD

/// A response made once and sent many times: libmicrohttpd keeps its bytes and header fields, so
/// sending it again copies nothing and builds no header list. For answers that many requests
/// share unchanged, such as the state of a session that did not change since its last read.
///
/// Send it with `Response.prepared(_:)`. A handler may still change that response (add a
/// `Set-Cookie`, say): then it is sent the ordinary way, as a new response.
public final class PreparedResponse: @unchecked Sendable {
    // @unchecked: the libmicrohttpd response is never changed after it is made, and libmicrohttpd
    // counts its users under its own lock, so any number of connections may send it at once.

    /// The response as a handler sees it.
    public let response: Response
    /// The libmicrohttpd response (`nil` when it could not be made: then it is sent the ordinary way).
    let handle: OpaquePointer?

    /// Prepares `response`, whose body must be bytes (a file or a stream is read once, so it
    /// cannot be shared: it is then sent the ordinary way each time).
    public init(_ response: Response) {
        self.response = response
        guard case .bytes = response.body else {
            handle = nil
            return
        }
        handle = HTTPServer.makeResponse(response.body, response.headers)
    }

    deinit {
        if let handle { MHD_destroy_response(handle) }
    }
}

extension Response {
    /// The prepared response, sent without copying while the status, headers and body are still
    /// the prepared ones.
    public static func prepared(_ prepared: PreparedResponse) -> Response {
        var response = prepared.response
        response.prepared = prepared
        return response
    }

    /// The libmicrohttpd response to send as it is, if this is an unchanged prepared response.
    var preparedHandle: OpaquePointer? {
        guard let prepared, let handle = prepared.handle else { return nil }
        let original = prepared.response
        guard status == original.status, case .bytes(let bytes) = body, case .bytes(let preparedBytes) = original.body,
            bytes.count == preparedBytes.count,
            bytes.withUnsafeBufferPointer({ mine in
                preparedBytes.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
            }),
            headers.storage.count == original.headers.storage.count
        else { return nil }
        for (field, preparedField) in zip(headers.storage, original.headers.storage)
        where field.name != preparedField.name || field.value != preparedField.value {
            return nil
        }
        return handle
    }
}
