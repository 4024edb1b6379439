import AppShellConcurrency
import AppShellHTTP
import AppShellSessions

/// What `GET /metrics` answers: Prometheus text (format 0.0.4) written by each of `sources` in
/// turn — the HTTP server's counters, the sessions, the password checks — so another part (the
/// store's statistics) is one more source in the list.
struct DemoMetrics: Sendable {
    /// The sources, in the order their families appear.
    let sources: [any MetricsSource]

    /// The answer: every source's families, never cached.
    func response() -> Response {
        var text = PrometheusText()
        for source in sources { source.writeMetrics(into: &text) }
        return text.response()
    }
}

/// The sessions held in memory and made since start.
struct SessionMetrics: MetricsSource {
    let sessions: SessionRegistry

    func writeMetrics(into text: inout PrometheusText) {
        text.single("appshell_sessions_in_memory", .gauge, "Sessions held in memory.", sessions.count)
        text.single(
            "appshell_sessions_created_total", .counter, "Sessions created since start.",
            sessions.createdCount.load(ordering: .relaxed))
    }
}

/// The password checks (Argon2id) waiting for and running on their worker pool.
struct PasswordCheckMetrics: MetricsSource {
    let pool: WorkerPool

    func writeMetrics(into text: inout PrometheusText) {
        text.single(
            "appshell_password_checks_queued", .gauge,
            "Password checks waiting for a thread (at most passwordCheckQueue; a login past it gets 503).",
            pool.queued)
        text.single("appshell_password_checks_running", .gauge, "Password checks running now.", pool.running)
        text.single(
            "appshell_password_check_threads", .gauge, "Threads that check passwords (passwordCheckThreads).",
            pool.threads)
    }
}
