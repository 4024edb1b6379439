import CMicroHTTPD
import Glibc

/// What the server knows about the request in progress on one connection.
///
/// One instance per connection, made when libmicrohttpd accepts it (its socket context) and used
/// again by every request on it (each request's `*con_cls`): a keep-alive connection allocates
/// nothing per request for it, and the buffer of received header fields keeps its room.
///
/// libmicrohttpd handles a connection on one thread at a time, so one instance is never used by
/// two threads at once. It is released when both the connection has closed and its last request
/// has completed, whichever libmicrohttpd reports last.
///
/// So its stored properties are `@exclusivity(unchecked)`: no access can overlap another, and the
/// run-time checks of theirs were 8 of the 30 a logged-in read made (callgrind, the Performance article).
final class PendingRequest: @unchecked Sendable {
    /// The request target exactly as received (before libmicrohttpd unescapes it).
    @exclusivity(unchecked) private(set) var target = ""
    /// When the request line arrived, in monotonic microseconds.
    @exclusivity(unchecked) private(set) var startMicros = 0
    /// Whether the access handler has seen the headers (its first call).
    @exclusivity(unchecked) var headersSeen = false
    /// The method, once the headers were seen.
    @exclusivity(unchecked) var method = ""
    /// The body received so far.
    @exclusivity(unchecked) var body: [UInt8] = []
    /// Set when the body went past the limit: the rest is discarded and the answer is 413.
    @exclusivity(unchecked) var tooLarge = false
    /// The most body bytes the request's responder reads (see `HTTPServer.bodyLimit`).
    @exclusivity(unchecked) var bodyLimit = 0
    /// The body bytes this request holds of the server's budget for buffered bodies.
    @exclusivity(unchecked) var bodyHeld = 0
    /// Set when the body did not fit in that budget: the rest is discarded and the answer is 503.
    @exclusivity(unchecked) var overBudget = false
    /// Set when the responder reads no body for this request: it is discarded as it arrives.
    @exclusivity(unchecked) var discardsBody = false
    /// The body's bytes still to come by its `Content-Length` (-1: not declared, chunked).
    @exclusivity(unchecked) var bodyBytesToCome = -1
    /// The status queued, 0 until a response is.
    @exclusivity(unchecked) var status = 0
    /// The body size queued.
    @exclusivity(unchecked) var bytes = 0
    /// The answer the responder deferred, while the request waits for it, the header fields to
    /// add to it, and the loop the request is parked on (`nil` while its connection is suspended).
    @exclusivity(unchecked) var deferred: (pending: PendingResponse, headers: HTTPHeaders, parkedOn: EventLoop?)?
    /// Whether the request waits for a deferred answer not given yet: a parked request, called
    /// again at a turn of its loop, has nothing to do then. Reads the answer's flag through the
    /// stored reference, without copying what `deferred` holds (three references retained and
    /// released at every turn).
    var isWaitingForAnswer: Bool {
        guard let answer = deferred?.pending else { return false }
        return !answer.hasAnswer
    }
    /// The client's address as the per-address connection limit counts it.
    @exclusivity(unchecked) var peer: IPAddress?
    /// The request's client as `trustedProxies` resolve it, once its header fields were read
    /// (`nil` before: the access log then names the peer).
    @exclusivity(unchecked) var client: IPAddress?
    /// The request's id (see `RequestID`), set when its header fields have arrived.
    @exclusivity(unchecked) var requestID = RequestID.Value.generated(0)
    /// The index of the label the request is counted under in `RequestMetrics`.
    @exclusivity(unchecked) var route = 0
    /// When the answer was queued, in monotonic microseconds.
    @exclusivity(unchecked) var answeredMicros = 0
    /// Why a 5xx was answered, when the server knows better than "the handler said so".
    @exclusivity(unchecked) var errorCause: ErrorCause?
    /// The received header fields, collected again for each request into the same buffer.
    @exclusivity(unchecked) var headers = HTTPHeaders(receivedCapacity: PendingRequest.headerBytes)

    /// The libmicrohttpd response this connection made last for a prepared response sent
    /// unchanged, with the `X-Request-ID` it carries now; this object holds a reference to it.
    @exclusivity(unchecked) private var reusable:
        (prepared: PreparedResponse, handle: OpaquePointer, id: UnsafePointer<CChar>?)?

    /// The connection's socket (-1: unknown), which `IdleConnections` shuts down.
    @exclusivity(unchecked) var socket: Int32 = -1
    /// The loop whose daemon holds the connection (`nil`: none of the server's loops).
    @exclusivity(unchecked) var loop: EventLoop?
    /// Since when, in monotonic microseconds, the connection waits for a request (-1: it does not).
    @exclusivity(unchecked) var waitingSince = -1
    /// Whether it waits after an answer (kept alive), not for its first request.
    @exclusivity(unchecked) var waitsAfterAnswer = false
    /// Whether `IdleConnections` shut the connection's socket down.
    @exclusivity(unchecked) var shutDown = false
    /// The next connection in its `IdleConnections` list (held) and the one before it (not held:
    /// it holds this one).
    @exclusivity(unchecked) var idleNext: PendingRequest?
    @exclusivity(unchecked) unowned(unsafe) var idlePrevious: PendingRequest?

    /// Whether a request has begun and not completed.
    @exclusivity(unchecked) private(set) var inRequest = false
    /// Whether libmicrohttpd reported the connection closed.
    @exclusivity(unchecked) private(set) var connectionClosed = false

    /// The room kept for received header fields; a connection that needed much more gets a new,
    /// small buffer at its next request.
    private static let headerBytes = 512

    /// Starts the next request on the connection, forgetting everything about the last one.
    func begin(target: String, startMicros: Int, route: Int) {
        self.target = target
        self.startMicros = startMicros
        self.route = route
        requestID = .generated(0)
        answeredMicros = startMicros
        errorCause = nil
        headersSeen = false
        method = ""
        body = []
        tooLarge = false
        bodyLimit = 0
        overBudget = false
        discardsBody = false
        bodyBytesToCome = -1
        status = 0
        bytes = 0
        deferred = nil
        client = nil
        inRequest = true
    }

    /// Empties the header fields for the next request: the buffer is kept when no earlier request
    /// still holds it, and replaced by a small one when a request had grown it past 4 KiB.
    func clearHeaders() {
        if headers.receivedCapacity > 8 * PendingRequest.headerBytes {
            headers = HTTPHeaders(receivedCapacity: PendingRequest.headerBytes)
        } else {
            headers.removeAll()
        }
    }

    deinit {
        if let reusable { MHD_destroy_response(reusable.handle) }
    }

    /// The libmicrohttpd response that sends `prepared` unchanged with this request's
    /// `X-Request-ID`, to queue without destroying it: the one this connection made for it at an
    /// earlier request, its id swapped, or else a new one kept for the next. libmicrohttpd lets go
    /// of a connection's response before it reads the next request, and no other connection is
    /// given this one, so changing its id changes nothing being sent. (A response shared between
    /// connections could not carry a per-request field; a new one per request costs a dozen
    /// allocations.) A new one gets the server's own fields (`addServerFields`: HTTPS's
    /// `Strict-Transport-Security`) besides the response's. `nil` when libmicrohttpd cannot make one.
    func reusableHandle(
        for prepared: PreparedResponse, _ response: Response,
        adding addServerFields: (_ made: OpaquePointer, _ unlessIn: HTTPHeaders) -> Void
    ) -> OpaquePointer? {
        if let reusable, reusable.prepared === prepared {
            let name = RequestID.cHeaderName
            let id = requestID.withCString { id, length in
                // The id in place when it has the same length (every generated one has): the
                // response's own copy of the value, which nothing else reads meanwhile.
                if let current = reusable.id, strlen(current) == length {
                    UnsafeMutablePointer(mutating: current).update(from: id, count: length)
                    return current
                }
                if let current = reusable.id { _ = MHD_del_response_header(reusable.handle, name, current) }
                _ = MHD_add_response_header(reusable.handle, name, id)
                return MHD_get_response_header(reusable.handle, name)
            }
            self.reusable?.id = id
            return reusable.handle
        }
        guard let made = prepared.newHandle(for: response) else { return nil }
        addServerFields(made, response.headers)
        requestID.withCString { id, _ in _ = MHD_add_response_header(made, RequestID.cHeaderName, id) }
        if let reusable { MHD_destroy_response(reusable.handle) }
        reusable = (prepared, made, MHD_get_response_header(made, RequestID.cHeaderName))
        return made
    }

    /// The request completed; true when the connection closed before, so this is the last use.
    func complete() -> Bool {
        inRequest = false
        return connectionClosed
    }

    /// The connection closed; true when no request is in progress, so this is the last use.
    func close() -> Bool {
        connectionClosed = true
        return !inRequest
    }

    /// The path part of the target, for the log (still encoded, without the query).
    var logPath: String {
        guard let question = target.firstIndex(of: "?") else { return target }
        return String(target[..<question])
    }
}
