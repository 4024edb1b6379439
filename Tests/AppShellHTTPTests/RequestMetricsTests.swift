import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Requests are counted by route (the router's pattern, never the raw path) and status, with a
/// latency histogram per route and server errors by cause.
@Suite struct RequestMetricsTests {
    static func start(fallback: (any HTTPResponder)? = nil) throws -> (LiveServer, ServerStatistics) {
        struct Failure: Error {}
        var router = Router(fallback: fallback)
        router.get("/a") { _ in .text("a") }
        router.get("/items/:id") { request in
            guard request.parameters["id"] != "missing" else { throw HTTPError.notFound("no such item") }
            return .text("item")
        }
        router.get("/fail") { _ in throw Failure() }
        router.get("/busy") { _ in throw HTTPError(.serviceUnavailable, "busy") }
        let statistics = ServerStatistics()
        return (try LiveServer(responder: router, statistics: statistics), statistics)
    }

    /// Waits until `count` requests completed (a request is counted as libmicrohttpd reports it
    /// done, which may be just after its client read the answer).
    static func waitForCompleted(_ statistics: ServerStatistics, _ count: Int) {
        let deadline = Date().addingTimeInterval(5)
        while statistics.completed < count && Date() < deadline { usleep(1_000) }
    }

    static func counts(_ statistics: ServerStatistics) -> [String: Int] {
        var result: [String: Int] = [:]
        for route in statistics.requests?.snapshot() ?? [] {
            for (status, count) in route.byStatus { result["\(route.route) \(status)"] = count }
        }
        return result
    }

    @Test func requestsAreCountedByRoutePatternAndStatus() throws {
        let (live, statistics) = try Self.start()
        let client = live.client()
        for _ in 0..<3 { _ = try client.get("/a") }
        _ = try client.send("HEAD", "/a")
        for id in ["1", "2", "3", "missing"] { _ = try client.get("/items/\(id)") }
        _ = try client.get("/nowhere/at/all")
        _ = try client.send("POST", "/a")
        _ = try client.get("/fail")
        _ = try client.get("/busy")
        Self.waitForCompleted(statistics, 12)
        #expect(
            Self.counts(statistics) == [
                "GET /a 200": 4, "GET /items/:id 200": 3, "GET /items/:id 404": 1, "not_found 404": 1,
                "method_not_allowed 405": 1, "GET /fail 500": 1, "GET /busy 503": 1,
            ])
        let errors = Dictionary(uniqueKeysWithValues: statistics.errors.map { ($0.cause, $0.count) })
        #expect(errors["unhandled_error"] == 1)
        #expect(errors["handler"] == 1)
        #expect(errors["shutting_down"] == 0)
    }

    @Test func theFallbackIsOneLabelWhateverThePath() throws {
        let (live, statistics) = try Self.start(fallback: ClosureResponder { _ in .text("file") })
        let client = live.client()
        for path in ["/x.css", "/y.js", "/z/w.svg"] { _ = try client.get(path) }
        Self.waitForCompleted(statistics, 3)
        #expect(Self.counts(statistics) == ["static 200": 3])
    }

    @Test func theHistogramIsCumulativeAndAgreesWithTheCounts() throws {
        let (live, statistics) = try Self.start()
        let client = live.client()
        for index in 0..<25 { _ = try client.get(index % 5 == 0 ? "/items/missing" : "/items/\(index)") }
        Self.waitForCompleted(statistics, 25)
        let route = try #require(statistics.requests?.snapshot().first { $0.route == "GET /items/:id" })
        #expect(route.cumulativeBuckets.count == RequestMetrics.bucketMicros.count + 1)
        #expect(zip(route.cumulativeBuckets, route.cumulativeBuckets.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(route.cumulativeBuckets.last == 25)
        #expect(route.byStatus.reduce(0) { $0 + $1.count } == 25)
        #expect(route.sumMicros > 0)
    }

    @Test func theExpositionListsEveryFamilyWithItsLabels() throws {
        let (live, statistics) = try Self.start()
        let client = live.client()
        _ = try client.get("/items/7")
        Self.waitForCompleted(statistics, 1)
        var text = PrometheusText()
        statistics.writeMetrics(into: &text)
        let lines = text.text.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"appshell_http_requests_total{route="GET /items/:id",status="200"} 1"#))
        #expect(lines.contains(#"appshell_http_request_duration_seconds_bucket{route="GET /items/:id",le="+Inf"} 1"#))
        #expect(lines.contains(#"appshell_http_request_duration_seconds_count{route="GET /items/:id"} 1"#))
        #expect(
            lines.contains { $0.hasPrefix(#"appshell_http_request_duration_seconds_sum{route="GET /items/:id"} "#) })
        #expect(lines.contains(#"appshell_http_errors_total{cause="unhandled_error"} 0"#))
        #expect(lines.contains("appshell_http_event_streams_open 0"))
        #expect(lines.contains("# TYPE appshell_http_request_duration_seconds histogram"))
        // The raw path never becomes a label.
        #expect(!text.text.contains("/items/7"))
    }

    @Test func labelValuesAreEscaped() {
        var text = PrometheusText()
        text.family("x_total", .counter, "Help with a \\ and\na line feed.")
        text.sample("x_total", ["route": "a\"b\\c\nd"], 1)
        #expect(
            text.text == "# HELP x_total Help with a \\\\ and\\na line feed.\n# TYPE x_total counter\n"
                + "x_total{route=\"a\\\"b\\\\c\\nd\"} 1\n")
    }
}
