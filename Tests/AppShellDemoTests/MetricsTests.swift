import AppShellConcurrency
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// `GET /metrics` of the demo over HTTP: the families move with real requests, streams and
/// password checks.
@Suite struct MetricsTests {
    /// The demo on the memory store behind a server that counts into the app's statistics.
    static func start(
        verifier: PasswordCheckPoolTests.HeldVerifier? = nil, _ edit: (inout DemoConfiguration) -> Void = { _ in }
    ) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.splashDelayMilliseconds = 0
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        edit(&configuration)
        let app =
            if let verifier {
                try DemoServer(configuration: configuration, verifyPassword: verifier.verify)
            } else {
                try DemoServer(configuration: configuration)
            }
        return (app, try LiveServer(responder: try app.makeResponder(), statistics: app.statistics))
    }

    /// The samples of `/metrics` by series (`name{labels}`), read by a client of its own.
    static func scrape(_ live: LiveServer) throws -> [String: Double] {
        let answer = try live.client().get("/metrics")
        #expect(answer.status == 200)
        var samples: [String: Double] = [:]
        for line in answer.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let value = line[line.index(after: space)...]
            samples[String(line[..<space])] = value == "+Inf" ? .infinity : Double(value)
        }
        return samples
    }

    /// Polls `/metrics` until `condition` holds of it (counters move as requests complete, just
    /// after their clients read the answers); returns the last scrape.
    static func scrape(_ live: LiveServer, until condition: ([String: Double]) -> Bool) throws -> [String: Double] {
        var samples = try scrape(live)
        for _ in 0..<500 where !condition(samples) {
            usleep(10_000)
            samples = try scrape(live)
        }
        return samples
    }

    @Test func requestsByRouteAndStatusMoveWithRealRequests() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        for _ in 0..<3 { _ = try client.get("/api/state") }
        _ = try client.postJSON("/api/actions", #"{"action": "no-such-action"}"#)
        _ = try client.get("/app.css")
        _ = try client.get("/no/such/file")
        let state = #"appshell_http_requests_total{route="GET /api/state",status="200"}"#
        let expected = [
            state: 3.0, #"appshell_http_requests_total{route="POST /api/actions",status="400"}"#: 1,
            #"appshell_http_requests_total{route="static",status="200"}"#: 1,
            #"appshell_http_requests_total{route="static",status="404"}"#: 1,
        ]
        let samples = try Self.scrape(live) { samples in expected.allSatisfy { samples[$0.key] == $0.value } }
        for (series, value) in expected { #expect(samples[series] == value, "\(series)") }
        #expect(!samples.keys.contains { $0.contains("/no/such/file") })
        #expect(samples["appshell_sessions_in_memory"] == 1)
        #expect(samples["appshell_sessions_created_total"] == 1)
        // The histogram of /api/state: cumulative, its +Inf bucket its count, the count its requests.
        let buckets = samples.filter {
            $0.key.hasPrefix(#"appshell_http_request_duration_seconds_bucket{route="GET /api/state","#)
        }
        #expect(buckets.count == RequestMetrics.bucketMicros.count + 1)
        let ordered = buckets.sorted { Self.bound($0.key) < Self.bound($1.key) }.map(\.value)
        #expect(zip(ordered, ordered.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(ordered.last == 3)
        #expect(samples[#"appshell_http_request_duration_seconds_count{route="GET /api/state"}"#] == 3)
        // The next scrape counts the one before it.
        let again = try Self.scrape(live) {
            $0[#"appshell_http_requests_total{route="GET /metrics",status="200"}"#] ?? 0 >= 1
        }
        #expect(again[#"appshell_http_requests_total{route="GET /metrics",status="200"}"#] ?? 0 >= 1)
    }

    static func bound(_ series: String) -> Double {
        guard let range = series.range(of: #"le=""#) else { return .nan }
        let value = series[range.upperBound...].prefix { $0 != "\"" }
        return value == "+Inf" ? .infinity : Double(value) ?? .nan
    }

    @Test func theStreamsGaugeGoesUpAndDown() throws {
        let (_, live) = try Self.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let cookie = SessionIsolationTests.cookieHeader(client)
        func open() throws -> RawConnection {
            let (stream, head) = try LiveEventsTests.openStream(live.port, cookie: cookie)
            #expect(head.hasPrefix("HTTP/1.1 200"))
            return stream
        }
        var streams = [try open(), try open()]
        let gauge = "appshell_http_event_streams_open"
        #expect(try Self.scrape(live) { $0[gauge] == 2 }[gauge] == 2)
        // A client hangs up (its connection closed as it is released): its stream ends, and the
        // gauge follows.
        streams.removeLast()
        #expect(try Self.scrape(live) { $0[gauge] == 1 }[gauge] == 1)
        streams.removeAll()
        #expect(try Self.scrape(live) { $0[gauge] == 0 }[gauge] == 0)
    }

    @Test func passwordChecksQueuedAndRunningAreShown() throws {
        let verifier = PasswordCheckPoolTests.HeldVerifier()
        defer { verifier.release() }
        let (_, live) = try Self.start(verifier: verifier) {
            $0.accounts.passwordCheckThreads = 1
            $0.accounts.passwordCheckQueue = 2
        }
        var answers: [Locked<TestResponse?>] = []
        for _ in 0..<2 {
            let client = live.client()
            _ = try client.get("/api/state")
            answers.append(PasswordCheckPoolTests.loginInBackground(client))
        }
        let running = "appshell_password_checks_running"
        let queued = "appshell_password_checks_queued"
        let held = try Self.scrape(live) { $0[running] == 1 && $0[queued] == 1 }
        #expect(held[running] == 1)
        #expect(held[queued] == 1)
        #expect(held["appshell_password_check_threads"] == 1)
        verifier.release()
        #expect(eventually { answers.allSatisfy { $0.withLock { $0 } != nil } })
        let done = try Self.scrape(live) { $0[running] == 0 && $0[queued] == 0 }
        #expect(done[running] == 0)
        #expect(done[queued] == 0)
    }
}
