import AppShellConcurrency
import AppShellJSON
import Glibc

/// Writes one JSON line per request, and the server's own events, to standard output.
///
/// Each line is one `write(2)` of less than a pipe buffer, so lines from different worker
/// threads never interleave.
package struct AccessLog: Sendable {
    /// Whether request lines are written.
    package let enabled: Bool

    /// A log that writes request lines when `enabled`.
    package init(enabled: Bool) { self.enabled = enabled }

    /// `{"time","requestID","client","method","path","status","bytes","micros"}` for one finished
    /// request (`requestID` as in its `X-Request-ID` answer, `client` as `trustedProxies` resolve it).
    func request(
        method: String, path: String, status: Int, bytes: Int, micros: Int, requestID: String, client: String
    ) {
        guard enabled else { return }
        var line: [UInt8] = []
        line.reserveCapacity(192)
        line.append(contentsOf: "{\"time\":\"".utf8)
        line.append(contentsOf: Clock.wallTimestamp().utf8)
        line.append(contentsOf: "\",\"requestID\":".utf8)
        JSON.writeString(requestID, into: &line)
        line.append(contentsOf: ",\"client\":".utf8)
        JSON.writeString(client, into: &line)
        line.append(contentsOf: ",\"method\":".utf8)
        JSON.writeString(method, into: &line)
        line.append(contentsOf: ",\"path\":".utf8)
        JSON.writeString(path, into: &line)
        line.append(contentsOf: ",\"status\":\(status),\"bytes\":\(bytes),\"micros\":\(micros)}\n".utf8)
        AccessLog.write(line, to: 1)
    }

    /// A server event such as `listening` or `stopped`, with extra fields, always written.
    package static func event(_ name: String, _ fields: [String: JSON] = [:]) {
        var object = fields
        object["time"] = .string(Clock.wallTimestamp())
        object["event"] = .string(name)
        var line = JSON.object(object).serialized
        line.append(0x0A)
        write(line, to: 1)
    }

    /// Writes `message` as one line to standard error.
    package static func error(_ message: String) {
        write(Array("appshell: \(message)\n".utf8), to: 2)
    }

    /// Writes `message`, logged while handling the request `requestID` (see `Request.requestID`),
    /// as one line to standard error: `appshell: [request <id>] <message>`.
    package static func error(_ message: String, requestID: String) {
        write(Array("appshell: [request \(requestID)] \(message)\n".utf8), to: 2)
    }

    /// A security event, such as a failed login or a lockout, as one line on standard error:
    /// `appshell: security: <event> name="value" …`. Each value is written as a JSON string of at
    /// most `securityValueLength` characters, so no value (a username is the client's to choose)
    /// can end the line, forge a field or flood the log.
    package static func security(_ event: String, _ fields: KeyValuePairs<String, String>) {
        var line = Array("appshell: security: \(event)".utf8)
        for (name, value) in fields {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: name.utf8)
            line.append(UInt8(ascii: "="))
            let shown = value.count > securityValueLength ? value.prefix(securityValueLength) + "…" : value
            JSON.writeString(String(shown), into: &line)
        }
        line.append(0x0A)
        write(line, to: 2)
    }

    /// The characters of a security event's value that are written.
    package static let securityValueLength = 128

    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { StandardError.writeAll($0, to: descriptor) }
    }
}

/// Clock readings for durations and log timestamps.
enum Clock {
    /// Monotonic time in microseconds.
    static func monotonicMicros() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }

    /// The current UTC time as RFC 3339 with microseconds.
    static func wallTimestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return HTTPDate.iso8601(seconds: now.tv_sec, microseconds: now.tv_nsec / 1000)
    }
}
