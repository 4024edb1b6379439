import Synchronization

/// Requests counted by route and status, with a latency histogram per route: what `/metrics`
/// shows as `appshell_http_requests_total` and `appshell_http_request_duration_seconds`.
///
/// The routes are fixed when the server is made (the router's patterns, and a few fixed labels
/// for requests no route answered), so the number of series is bounded whatever clients send.
/// Counting a request is three relaxed atomic additions into counters made in advance: no lock,
/// no allocation.
package final class RequestMetrics: Sendable {
    /// The label of each route, by index (see `RouteLabel`).
    package let routes: [String]
    private let counters: [RouteCounters]

    /// The upper bounds of the latency buckets, in microseconds (the last, `+Inf`, is implicit).
    package static let bucketMicros: [Int] = [
        500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
        5_000_000,
    ]

    /// Counters for `routes` (the router's labels, in its order) and the fixed labels after them.
    init(routes: [String]) {
        self.routes = routes + RouteLabel.fixed
        counters = self.routes.map { _ in RouteCounters() }
    }

    /// Counts one answered request: `route` a label index, `status` its code, `micros` the time
    /// from its request line to its answer being queued.
    func record(route: Int, status: Int, micros: Int) {
        let counters = counters[route]
        let slot = status >= 100 && status < 600 ? status - 100 : RouteCounters.statusSlots - 1
        counters.byStatus[slot].add(1, ordering: .relaxed)
        var bucket = 0
        while bucket < RequestMetrics.bucketMicros.count && micros > RequestMetrics.bucketMicros[bucket] { bucket += 1 }
        counters.buckets[bucket].add(1, ordering: .relaxed)
        counters.sumMicros.add(micros, ordering: .relaxed)
    }

    /// One route's figures read now (not atomically as a whole: each counter on its own).
    package struct Snapshot: Sendable {
        /// The route's label.
        package let route: String
        /// Answered requests by status code, the codes in increasing order; only codes seen.
        package let byStatus: [(status: Int, count: Int)]
        /// The latency histogram, cumulative: requests answered within each of `bucketMicros`, then
        /// all of them (`+Inf`); the last is the histogram's count.
        package let cumulativeBuckets: [Int]
        /// The sum of the latencies, in microseconds.
        package let sumMicros: Int
    }

    /// The figures of every route that answered at least one request.
    package func snapshot() -> [Snapshot] {
        var result: [Snapshot] = []
        for (index, counters) in self.counters.enumerated() {
            var byStatus: [(status: Int, count: Int)] = []
            for slot in 0..<RouteCounters.statusSlots {
                let count = counters.byStatus[slot].load(ordering: .relaxed)
                if count > 0 { byStatus.append((slot == RouteCounters.statusSlots - 1 ? 0 : slot + 100, count)) }
            }
            var cumulative: [Int] = []
            var total = 0
            for bucket in 0...RequestMetrics.bucketMicros.count {
                total += counters.buckets[bucket].load(ordering: .relaxed)
                cumulative.append(total)
            }
            guard total > 0 || !byStatus.isEmpty else { continue }
            result.append(
                Snapshot(
                    route: routes[index], byStatus: byStatus, cumulativeBuckets: cumulative,
                    sumMicros: counters.sumMicros.load(ordering: .relaxed)))
        }
        return result
    }
}

/// One route's counters: one per status code from 100 to 599 and one for any other, and the
/// latency buckets (the last is `+Inf`).
private final class RouteCounters: Sendable {
    static let statusSlots = 501
    let byStatus = InlineArray<501, Atomic<Int>> { _ in Atomic(0) }
    let buckets = InlineArray<14, Atomic<Int>> { _ in Atomic(0) }
    let sumMicros = Atomic<Int>(0)
}

/// The labels of requests that no route of the router answered, after the router's own.
package enum RouteLabel {
    /// Answered by the router's fallback (static files).
    package static let fallback = "static"
    /// No route and no fallback: 404.
    package static let notFound = "not_found"
    /// A route's path with a method it does not take: 405 (or 501 for an unknown method).
    package static let methodNotAllowed = "method_not_allowed"
    /// Refused before any routing: a malformed target, a host not served, a body too large,
    /// ambiguous framing, or a responder that is not a router.
    package static let unrouted = "unrouted"

    /// The fixed labels, in the order they follow the router's.
    static let fixed = [fallback, notFound, methodNotAllowed, unrouted]
}
