/// What the server knows about one request while libmicrohttpd processes it: created from the
/// raw request target, kept in the connection's `*con_cls`, released when the request completes.
///
/// libmicrohttpd handles a connection on one thread at a time, so one instance is never used by
/// two threads at once.
final class PendingRequest: @unchecked Sendable {
    /// The request target exactly as received (before libmicrohttpd unescapes it).
    let target: String
    /// When the request line arrived, in monotonic microseconds.
    let startMicros: Int
    /// Whether the access handler has seen the headers (its first call).
    var headersSeen = false
    /// The method, once the headers were seen.
    var method = ""
    /// The body received so far.
    var body: [UInt8] = []
    /// Set when the body went past the limit: the rest is discarded and the answer is 413.
    var tooLarge = false
    /// The status queued, 0 until a response is.
    var status = 0
    /// The body size queued.
    var bytes = 0

    init(target: String, startMicros: Int) {
        self.target = target
        self.startMicros = startMicros
    }

    /// The path part of the target, for the log (still encoded, without the query).
    var logPath: String {
        guard let question = target.firstIndex(of: "?") else { return target }
        return String(target[..<question])
    }
}
