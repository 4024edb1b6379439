import AppShellConcurrency
import AppShellJSON
import Glibc

/// The server's entries for `Logger`: one per answered request (label `appshell.access`, level
/// `info`), its lifecycle events (`appshell.events`, `notice`) and security events
/// (`appshell.security`, `notice`). By default each becomes the line it always was
/// (`StandardLogHandler`); an app's handler gets them as entries (`LoggingSystem`).
package struct AccessLog: Sendable {
    /// Whether request entries are made: the `accessLog` key is on and the logger writes `info`.
    package let enabled: Bool

    /// The logger of request entries, from `LoggingSystem` when the server is made.
    let logger: Logger

    /// A log that makes request entries when `enabled` and its logger's level lets `info` through.
    package init(enabled: Bool, logger: Logger = Logger(label: StandardLogHandler.accessLabel)) {
        self.logger = logger
        self.enabled = enabled && logger.logs(.info)
    }

    /// The entry of one finished request, its metadata in this order: `requestID` (as in its
    /// `X-Request-ID` answer), `client` (as `trustedProxies` resolve it), `method`, `path`,
    /// `status`, `bytes`, `micros`.
    func request(
        method: String, path: String, status: Int, bytes: Int, micros: Int, requestID: String, client: String
    ) {
        guard enabled else { return }
        logger.info(
            "request",
            metadata: [
                "requestID": .string(requestID), "client": .string(client), "method": .string(method),
                "path": .string(path), "status": .integer(status), "bytes": .integer(bytes), "micros": .integer(micros),
            ])
    }

    /// A server event such as `listening` or `stopped`, with extra fields, at `notice`.
    package static func event(_ name: String, _ fields: [String: JSON] = [:]) {
        var metadata: Logger.Metadata = [:]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { metadata[key] = value }
        Logger(label: StandardLogHandler.eventLabel).notice(name, metadata: metadata)
    }

    /// A security event, such as a failed login or a lockout, at `notice` (by default one line on
    /// standard error: `appshell: security: <event> name="value" …`). Each value is cut to
    /// `securityValueLength` characters, so no value (a username is the client's to choose) can
    /// flood the log; the default line writes each as a JSON string, so none can end the line or
    /// forge a field.
    package static func security(_ event: String, _ fields: KeyValuePairs<String, String>) {
        var metadata: Logger.Metadata = [:]
        for (name, value) in fields {
            let shown = value.count > securityValueLength ? value.prefix(securityValueLength) + "…" : value
            metadata[name] = .string(String(shown))
        }
        Logger(label: "appshell.security").notice(event, metadata: metadata)
    }

    /// The characters of a security event's value that are written.
    package static let securityValueLength = 128
}

/// Monotonic clock readings for durations.
enum Clock {
    /// Monotonic time in microseconds.
    static func monotonicMicros() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }
}
