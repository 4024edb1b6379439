import CMicroHTTPD
import Glibc

// What the server does with a request's header fields and body before the responder sees them: how
// the fields are collected, whether the body is read at all, whether its framing can be trusted,
// and the answer when it is too large.

/// Collects header fields into the `HTTPHeaders` that `cls` points to (sizes given: no strlen).
let headerCollector: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
    key.withMemoryRebound(to: UInt8.self, capacity: keySize) { name in
        guard let value else {
            headers.pointee.receive(
                name: UnsafeBufferPointer(start: name, count: keySize), value: .init(start: nil, count: 0))
            return
        }
        value.withMemoryRebound(to: UInt8.self, capacity: valueSize) {
            headers.pointee.receive(
                name: UnsafeBufferPointer(start: name, count: keySize),
                value: UnsafeBufferPointer(start: $0, count: valueSize))
        }
    }
    return .YES
}

extension HTTPServer {
    /// The most body bytes the responder reads for the request whose header fields just arrived
    /// (its route's limit within `maxBodyBytes`); `nil` when it reads none.
    func bodyLimit(_ connection: OpaquePointer, _ pending: PendingRequest) -> Int? {
        let method = HTTPMethod(rawValue: pending.method)
        // A target that does not parse is answered 400 without its body.
        guard let parts = try? Request.parse(method: method, target: pending.target) else { return nil }
        pending.clearHeaders()
        _ = withUnsafeMutablePointer(to: &pending.headers) {
            MHD_get_connection_values_n(connection, .HEADER_KIND, headerCollector, $0)
        }
        let request = Request(
            method: method, target: pending.target, parts: parts, headers: pending.headers, body: [],
            address: ClientAddress(appshell_mhd_client_address(connection)), requestID: pending.requestID)
        guard responder.acceptsBody(request) else { return nil }
        return min(configuration.maxBodyBytes, responder.maxBodyBytes(for: request) ?? .max)
    }

    /// Begins to collect a body of at most `limit` bytes, `declared` long when its length was
    /// given: its room is taken at once, from the budget for all bodies being received
    /// (`maxBufferedBodyBytes`), so that it is allocated once. Returns the refusal to send now
    /// instead: 413 for a declared length past the limit, 503 when the budget has no room for it.
    func beginBody(declared: Int?, limit: Int, _ pending: PendingRequest) -> Response? {
        pending.bodyLimit = limit
        guard let declared, declared > 0 else { return nil }
        if declared > limit { return tooLarge(limit) }
        guard holdBody(declared, pending) else { return overBudget() }
        pending.body.reserveCapacity(declared)
        return nil
    }

    /// Takes `count` more bytes of the body at `upload`: kept within the request's limit and the
    /// budget; past either, the body is let go and the rest discarded (answered at the end).
    func receiveBody(_ upload: UnsafePointer<CChar>?, count: Int, _ pending: PendingRequest) {
        guard !pending.tooLarge, !pending.overBudget, let upload else { return }
        let total = pending.body.count + count
        if total > pending.bodyLimit {
            pending.tooLarge = true
        } else if total > pending.bodyHeld, !holdBody(total - pending.bodyHeld, pending) {
            pending.overBudget = true
        } else {
            upload.withMemoryRebound(to: UInt8.self, capacity: count) {
                pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
            return
        }
        pending.body = []
        releaseBody(pending)
    }

    /// The answer to a body that went past its limit (413) or the budget (503); `nil` otherwise.
    func bodyRefusal(_ pending: PendingRequest) -> Response? {
        if pending.tooLarge { return tooLarge(pending.bodyLimit) }
        if pending.overBudget { return overBudget() }
        return nil
    }

    /// Counts `bytes` more of the budget for `pending`'s body; false, counting nothing, when the
    /// budget has no room for them.
    private func holdBody(_ bytes: Int, _ pending: PendingRequest) -> Bool {
        let held = bufferedBodyBytes.add(bytes, ordering: .relaxed).newValue
        guard held <= configuration.maxBufferedBodyBytes else {
            bufferedBodyBytes.subtract(bytes, ordering: .relaxed)
            return false
        }
        pending.bodyHeld += bytes
        return true
    }

    /// Gives back what `pending`'s body held of the budget (when the request completed, or its
    /// body was let go).
    func releaseBody(_ pending: PendingRequest) {
        guard pending.bodyHeld > 0 else { return }
        bufferedBodyBytes.subtract(pending.bodyHeld, ordering: .relaxed)
        pending.bodyHeld = 0
    }

    /// The answer to a body framed by `Transfer-Encoding` that cannot be read safely (RFC 9112
    /// §6.1, §6.3): with `Content-Length` as well (a request-smuggling shape), without `chunked`
    /// as its final coding, with `chunked` twice, or other than a field that is exactly `chunked`,
    /// 400; with other codings before `chunked`, 501. `nil` for plain `chunked`. libmicrohttpd
    /// 0.9.75 would read the first as chunked and the others to the end of the connection. The connection closes after the answer.
    func refuseFraming(_ connection: OpaquePointer, withContentLength: Bool) -> Response? {
        var values = HTTPHeaders()
        _ = withUnsafeMutablePointer(to: &values) {
            MHD_get_connection_values_n(connection, .HEADER_KIND, headerCollector, $0)
        }
        let codings = values.values(for: "Transfer-Encoding").joined(separator: ",").split(separator: ",")
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
        let error: HTTPError?
        if withContentLength {
            error = .badRequest("a request must not carry both Transfer-Encoding and Content-Length")
        } else if codings.last != "chunked" {
            error = .badRequest("the body's length cannot be determined: chunked must be the final transfer coding")
        } else if codings.dropLast().contains("chunked") {
            error = .badRequest("chunked must not be applied more than once (RFC 9112 §6.1)")
        } else if codings.count > 1 {
            let others = codings.dropLast().joined(separator: ", ")
            error = HTTPError(.notImplemented, "the transfer coding \(others) is not implemented by this server")
        } else if let first = MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding"),
            strcasecmp(first, "chunked") != 0
        {
            // libmicrohttpd reads a chunked body only for the field `chunked` exactly, and any other
            // body to the connection's end (a client that keeps it open waits for the idle timeout).
            error = .badRequest("the Transfer-Encoding field must be exactly chunked, with no spaces around it")
        } else {
            error = nil
        }
        guard let error else { return nil }
        var response = Response.error(error, for: nil)
        response.headers.add(name: "Connection", value: "close")
        return response
    }

    /// The answer to a body longer than `limit`.
    func tooLarge(_ limit: Int) -> Response {
        .error(HTTPError(.contentTooLarge, "the request body is larger than \(limit) bytes"), for: nil)
    }

    /// The answer to a body the budget for bodies being received has no room for; the connection
    /// closes after it (the rest of the body is not read).
    func overBudget() -> Response {
        var response = Response.error(
            HTTPError(
                .serviceUnavailable, "the server is receiving too many request bodies at once; try again in a moment",
                headers: ["Retry-After": "1"]), for: nil)
        response.headers.add(name: "Connection", value: "close")
        return response
    }
}
