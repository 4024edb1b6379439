import Synchronization

/// Counters the server keeps as it runs, for `/metrics` and for graceful shutdown. Every counter
/// is an atomic updated with relaxed ordering: the request path takes no lock for them.
package final class ServerStatistics: Sendable {
    /// Requests between their request line and their completion.
    let inFlightCounter = Atomic<Int>(0)
    /// Requests completed since start.
    let completedCounter = Atomic<Int>(0)
    /// Connections whose state the server holds.
    let connectionCounter = Atomic<Int>(0)
    /// Event streams open now.
    let streamCounter = Atomic<Int>(0)
    /// Connections kept alive that waited past the keep-alive timeout and were closed.
    let keepAliveTimeouts = Atomic<Int>(0)
    /// Waiting connections closed to make room near the connection limit.
    let reclaimedConnections = Atomic<Int>(0)
    /// New connections closed before their first request (an HTTPS handshake that stalled).
    let firstRequestTimeouts = Atomic<Int>(0)
    /// Server errors by cause (`ErrorCause`).
    let errorCounters = InlineArray<5, Atomic<Int>> { _ in Atomic(0) }
    /// The requests by route, status and latency of the server counting here (set when it is made).
    private let requestMetrics = AtomicLazyReference<RequestMetrics>()

    /// Fresh counters.
    package init() {}

    /// Requests being processed now.
    package var inFlight: Int { inFlightCounter.load(ordering: .relaxed) }
    /// Requests completed since the server started.
    package var completed: Int { completedCounter.load(ordering: .relaxed) }
    /// Open connections: from their accept until both their close and their last request's end.
    package var openConnections: Int { connectionCounter.load(ordering: .relaxed) }
    /// Event streams open now.
    package var openEventStreams: Int { streamCounter.load(ordering: .relaxed) }
    /// Requests by route, status and latency; `nil` until a server counts here.
    package var requests: RequestMetrics? { requestMetrics.load() }

    /// Server errors since start by cause (see `ErrorCause`), every cause listed.
    package var errors: [(cause: String, count: Int)] {
        ErrorCause.allCases.map { ($0.label, errorCounters[$0.rawValue].load(ordering: .relaxed)) }
    }

    /// The metrics to count `routes` into: the first server's, kept for later servers with the
    /// same routes (a server made again over the same statistics), else a server's own.
    func adopt(routes: [String]) -> RequestMetrics {
        let made = RequestMetrics(routes: routes)
        let stored = requestMetrics.storeIfNil(made)
        return stored.routes == made.routes ? stored : made
    }

    /// Counts one error of `cause`.
    func count(_ cause: ErrorCause) {
        errorCounters[cause.rawValue].add(1, ordering: .relaxed)
    }
}

/// Why the server answered 5xx or could not answer.
enum ErrorCause: Int, CaseIterable {
    /// A responder threw an error that is not an `HTTPError`: 500.
    case unhandled = 0
    /// A responder answered 5xx itself (its store unavailable, a queue full…).
    case handler
    /// Answered 503 because the server is shutting down.
    case shuttingDown
    /// An event stream refused: every stream the server allows is open (503).
    case streamLimit
    /// libmicrohttpd could not make or queue the response; the connection was closed.
    case responseFailed

    /// The `cause` label.
    var label: String {
        switch self {
        case .unhandled: "unhandled_error"
        case .handler: "handler"
        case .shuttingDown: "shutting_down"
        case .streamLimit: "stream_limit"
        case .responseFailed: "response_failed"
        }
    }
}

extension ServerStatistics: MetricsSource {
    /// The HTTP families: requests (by route and status), latency, in flight, connections,
    /// event streams and errors.
    package func writeMetrics(into text: inout PrometheusText) {
        text.single(
            "appshell_http_requests_completed_total", .counter, "Requests completed since start.", completed)
        text.single("appshell_http_requests_in_flight", .gauge, "Requests being processed.", inFlight)
        text.single("appshell_http_connections_open", .gauge, "Open client connections.", openConnections)
        text.family(
            "appshell_http_idle_connections_closed_total", .counter,
            "Connections closed while waiting for a request: kept alive past the keep-alive timeout, reclaimed near the connection limit, or new past the handshake timeout (HTTPS)."
        )
        text.sample(
            "appshell_http_idle_connections_closed_total", ["reason": "keep_alive_timeout"],
            keepAliveTimeouts.load(ordering: .relaxed))
        text.sample(
            "appshell_http_idle_connections_closed_total", ["reason": "reclaimed"],
            reclaimedConnections.load(ordering: .relaxed))
        text.sample(
            "appshell_http_idle_connections_closed_total", ["reason": "handshake_timeout"],
            firstRequestTimeouts.load(ordering: .relaxed))
        text.single("appshell_http_event_streams_open", .gauge, "Open event streams (/api/events).", openEventStreams)
        text.family(
            "appshell_http_errors_total", .counter,
            "Server errors since start by cause: 5xx answers, and responses that could not be sent.")
        for (cause, count) in errors { text.sample("appshell_http_errors_total", ["cause": cause], count) }
        guard let routes = requests?.snapshot() else { return }
        text.family(
            "appshell_http_requests_total", .counter,
            "Requests answered since start by route (the router's pattern, or a fixed label) and status.")
        for route in routes {
            for (status, count) in route.byStatus {
                text.sample(
                    "appshell_http_requests_total",
                    ["route": route.route, "status": status == 0 ? "other" : String(status)],
                    count)
            }
        }
        let name = "appshell_http_request_duration_seconds"
        text.family(
            name, .histogram, "Time from the request line to the answer being queued, by route.")
        for route in routes {
            for (index, count) in route.cumulativeBuckets.enumerated() {
                let bound =
                    index < RequestMetrics.bucketMicros.count
                    ? PrometheusText.format(Double(RequestMetrics.bucketMicros[index]) / 1_000_000) : "+Inf"
                text.sample(name + "_bucket", ["route": route.route, "le": bound], count)
            }
            text.sample(name + "_sum", ["route": route.route], Double(route.sumMicros) / 1_000_000)
            text.sample(name + "_count", ["route": route.route], route.cumulativeBuckets.last ?? 0)
        }
    }
}
