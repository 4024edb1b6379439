import CMicroHTTPD

// What the server notes about each request for the access log and `/metrics`: its id, its route,
// status and latency, and the cause of a server error.

extension HTTPServer {
    /// The id of the request whose header fields just arrived on `connection`: its
    /// `X-Request-ID` when that is a short token (see `RequestID`), else a new one.
    static func requestID(of connection: OpaquePointer) -> RequestID.Value {
        var value: UnsafePointer<CChar>?
        var size = 0
        let found = MHD_lookup_connection_value_n(connection, .HEADER_KIND, RequestID.cHeaderName, 12, &value, &size)
        guard found == .YES, let value, size <= RequestID.maxLength else { return .next() }
        return value.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
            let buffer = UnsafeBufferPointer(start: bytes, count: size)
            return RequestID.isAcceptable(buffer) ? .given(String(decoding: buffer, as: UTF8.self)) : .next()
        }
    }

    /// Counts a request that was answered (its status set) as it completes: by route, status and
    /// latency, as a server error when 5xx, and in the access log.
    func count(_ pending: PendingRequest) {
        let status = pending.status
        requestMetrics.record(
            route: pending.route, status: status, micros: pending.answeredMicros - pending.startMicros)
        if status >= 500 { statistics.count(pending.errorCause ?? .handler) }
        guard log.enabled else { return }
        let client = (pending.client ?? pending.peer).map { ClientAddress($0).text } ?? ""
        log.request(
            method: pending.method, path: pending.logPath, status: status, bytes: pending.bytes,
            micros: Clock.monotonicMicros() - pending.startMicros, requestID: pending.requestID.text, client: client)
    }
}
