import AppShellConcurrency
import AppShellHTTP
import AppShellSessions

/// What `GET /metrics` answers: Prometheus text (format 0.0.4) written by each of `sources` in
/// turn — the HTTP server's counters, the sessions, the app's own sources, the store's writer — so
/// another part is one more source in the list.
struct ShellMetrics: Sendable {
    /// The sources, in the order their families appear.
    let sources: [any MetricsSource]

    /// The answer: every source's families, never cached.
    func response() -> Response {
        var text = PrometheusText()
        for source in sources { source.writeMetrics(into: &text) }
        return text.response()
    }
}

/// The sessions held in memory and made since start; with a store that grants leases, the
/// leases granted to this instance and given up at another's request.
struct SessionMetrics: MetricsSource {
    let sessions: SessionRegistry

    func writeMetrics(into text: inout PrometheusText) {
        text.single("appshell_sessions_in_memory", .gauge, "Sessions held in memory.", sessions.count)
        text.single(
            "appshell_sessions_created_total", .counter, "Sessions created since start.",
            sessions.createdCount.load(ordering: .relaxed))
        guard sessions.backend.leaseTerms != nil else { return }
        text.single(
            "appshell_session_leases_granted_total", .counter,
            "Session leases the store granted this instance since start (its requests then need no check).",
            sessions.leasesGranted.load(ordering: .relaxed))
        text.single(
            "appshell_session_leases_released_total", .counter,
            "Session leases this instance gave up since start because another instance waited to write.",
            sessions.leasesReleased.load(ordering: .relaxed))
    }
}

/// The store writer's counters for `/metrics` (commits, batches, writes per batch, errors,
/// commit latency, writes queued); nothing for a store without a writer (memory).
struct StoreMetrics: MetricsSource {
    let sessions: SessionRegistry

    func writeMetrics(into text: inout PrometheusText) {
        guard let writer = sessions.writer else { return }
        text.append(writer.statistics.snapshot.prometheusText())
        text.single(
            "appshell_store_writes_queued", .gauge, "Writes waiting for the store writer.", writer.queued)
    }
}
