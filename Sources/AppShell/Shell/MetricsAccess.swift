import AppShellHTTP

/// Who may read `GET /metrics`: it shows live login outcomes, queue depths and session counts,
/// which tell an attacker when a guessing run works and how close the server is to its limits.
///
/// Without a token the metrics are served to loopback clients only (a scraper on the same host or
/// in the same container's network namespace; behind a trusted proxy the forwarded client counts,
/// so the proxy does not open them to everyone); anyone else gets 403 saying how to open them. With
/// `metricsToken` set, a request from anywhere with `Authorization: Bearer <token>` reads them
/// (compared in constant time), and one without it gets 401 — as Prometheus scrapes with
/// `authorization: credentials`.
struct MetricsAccess: Sendable {
    /// The bearer token; `nil`: loopback clients only.
    let token: String?

    /// Throws the refusal when `request` may not read the metrics.
    func check(_ request: Request) throws(HTTPError) {
        guard let token else {
            guard request.clientIsLoopback else {
                throw HTTPError(
                    .forbidden,
                    "the metrics are served to loopback clients only; set metricsToken (APPSHELL_METRICS_TOKEN) "
                        + "and send it as Authorization: Bearer <token> to read them from elsewhere")
            }
            return
        }
        let sent = request.headers["Authorization"].flatMap { value -> Substring? in
            guard value.count > 7, value.prefix(7).lowercased() == "bearer " else { return nil }
            return value.dropFirst(7)
        }
        guard let sent, Self.same(Array(sent.utf8), Array(token.utf8)) else {
            throw HTTPError(
                .unauthorized, "the metrics need Authorization: Bearer <metricsToken>",
                headers: ["WWW-Authenticate": "Bearer realm=\"metrics\""])
        }
    }

    /// Whether `given` is `expected`, in a time that depends on their lengths alone.
    static func same(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= given[index] ^ expected[index] }
        return difference == 0
    }
}
