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
    /// Whether the responder reads the body of the request whose header fields just arrived.
    func readsBody(_ connection: OpaquePointer, _ pending: PendingRequest) -> Bool {
        let method = HTTPMethod(rawValue: pending.method)
        // A target that does not parse is answered 400 without its body.
        guard let parts = try? Request.parse(method: method, target: pending.target) else { return false }
        pending.clearHeaders()
        _ = withUnsafeMutablePointer(to: &pending.headers) {
            MHD_get_connection_values_n(connection, .HEADER_KIND, headerCollector, $0)
        }
        return responder.acceptsBody(
            Request(
                method: method, target: pending.target, parts: parts, headers: pending.headers, body: [],
                address: ClientAddress(appshell_mhd_client_address(connection)), requestID: pending.requestID))
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

    func tooLarge() -> Response {
        .error(
            HTTPError(.contentTooLarge, "the request body is larger than \(configuration.maxBodyBytes) bytes"), for: nil
        )
    }
}
