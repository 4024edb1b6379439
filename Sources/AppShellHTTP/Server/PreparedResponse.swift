import CMicroHTTPD

/// A response made once and sent many times: its bytes are never copied again, and a connection
/// that sends it again sends the libmicrohttpd response it made the last time (with the new
/// request's `X-Request-ID`, see `PendingRequest.reusableHandle`), building no header list. For
/// answers that many requests share unchanged, such as the state of a session that did not change
/// since its last read.
///
/// Send it with `Response.prepared(_:)`. A handler may still change that response (add a
/// `Set-Cookie`, say): then a new libmicrohttpd response is made, which still borrows the
/// prepared bytes rather than copying them.
package final class PreparedResponse: @unchecked Sendable {
    // @unchecked: nothing here changes after `init`, and libmicrohttpd counts the users of its
    // response under its own lock, so any number of connections may send it at once.

    /// The response as a handler sees it.
    package let response: Response
    /// About the memory the prepared response holds: its body twice (the response's, and the copy
    /// libmicrohttpd sends from) and about 1 KiB for its header fields and objects.
    package var heldBytes: Int { 2 * storage.count + 1024 }
    /// The body's bytes for libmicrohttpd to read (empty when the body is not bytes). They belong
    /// to `handle`, destroyed with this object; each libmicrohttpd response that sends them keeps
    /// this object until libmicrohttpd is done with it, which can be long after its last other
    /// user let it go (a slow client still being sent a replaced response).
    private let storage: UnsafeMutableRawBufferPointer
    /// The libmicrohttpd response that owns the bytes (`nil` when the body is not bytes or it
    /// could not be made: then the response is sent the ordinary way). Never sent itself: every
    /// answer carries its own `X-Request-ID`, so the responses sent are made by `newHandle`.
    private let handle: OpaquePointer?

    /// Prepares `response`, whose body must be bytes (a file or a stream is read once, so it
    /// cannot be shared: it is then sent the ordinary way each time).
    package init(_ response: Response) {
        self.response = response
        guard case .bytes(let bytes) = response.body else {
            storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
            handle = nil
            return
        }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        // From here the bytes are libmicrohttpd's: `freePreparedBytes` runs when it destroys the
        // response for the last time (our reference, dropped in `deinit`, and each connection's).
        handle = MHD_create_response_from_buffer_with_free_callback_cls(
            storage.count, storage.baseAddress, freePreparedBytes, storage.baseAddress)
        if let handle {
            HTTPServer.addHeaders(response.headers, to: handle)
            self.storage = storage
        } else {
            storage.deallocate()
            self.storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
    }

    deinit {
        // Drops this object's reference only: connections still sending it keep it (and the bytes).
        if let handle { MHD_destroy_response(handle) }
    }

    /// Whether `response`, which began as this one, is still this one: same status, header fields
    /// and bytes.
    func isUnchanged(_ response: Response) -> Bool {
        handle != nil && hasPreparedBytes(response) && response.status == self.response.status
            && response.headers.hasSameFields(as: self.response.headers)
    }

    /// Whether the body of `response` is still the prepared bytes.
    private func hasPreparedBytes(_ response: Response) -> Bool {
        guard case .bytes(let bytes) = response.body, case .bytes(let preparedBytes) = self.response.body else {
            return false
        }
        return bytes.withUnsafeBufferPointer { mine in
            preparedBytes.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress && $0.count == mine.count }
        }
    }

    /// A new libmicrohttpd response for `response`, which began as this one: the prepared bytes,
    /// borrowed, with the header fields of `response` (the caller destroys it). `nil` when the
    /// body is no longer the prepared one.
    func newHandle(for response: Response) -> OpaquePointer? {
        guard handle != nil, hasPreparedBytes(response) else { return nil }
        // The new response keeps this object, so `handle` and its bytes, until libmicrohttpd is done.
        let retained = Unmanaged.passRetained(self)
        guard
            let made = MHD_create_response_from_buffer_with_free_callback_cls(
                storage.count, storage.baseAddress, releasePrepared, retained.toOpaque())
        else {
            retained.release()
            return nil
        }
        HTTPServer.addHeaders(response.headers, to: made)
        return made
    }
}

/// Called by libmicrohttpd when a prepared response is destroyed for the last time: frees its bytes.
private let freePreparedBytes: MHD_ContentReaderFreeCallback = { bytes in
    bytes?.deallocate()
}

/// Called by libmicrohttpd when a response borrowing a prepared one's bytes is destroyed.
private let releasePrepared: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<PreparedResponse>.fromOpaque(cls).release()
}

extension Response {
    /// The prepared response, sent without copying while the status, headers and body are still
    /// the prepared ones (and without copying the body when only the status or headers changed).
    package static func prepared(_ prepared: PreparedResponse) -> Response {
        var response = prepared.response
        response.prepared = prepared
        return response
    }
}
