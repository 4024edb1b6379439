import AppShellJSON
import Glibc

/// The default handler: the lines the server has always written, each one `write(2)` of less than
/// a pipe buffer, so lines from different threads never interleave.
///
/// - `appshell.access` (`accessLabel`): a JSON line on standard output, `{"time":…}` and then the
///   metadata in order: `{"time","requestID","client","method","path","status","bytes","micros"}`.
/// - `appshell.events` (`eventLabel`): a JSON line on standard output with the members `event`
///   (the message), `time` and the metadata, keys sorted: `listening`, `stopping`, `stopped`, ….
/// - any other label: a text line on standard error, `appshell: ` then `[request <id>] ` when the
///   metadata has a `requestID`, the label's last part and `: ` unless the label is `appshell`,
///   `warning: ` for a warning, the message, and ` name="value"` for each other metadata value
///   (each value as JSON, so no value can end the line): `appshell: security: login failed
///   username="ada" client="203.0.113.7"`.
///
/// The level decides only whether an entry is written (`Logger.logLevel`), not how.
public struct StandardLogHandler: LogHandler {
    /// The label of the access log's logger: one entry per answered request.
    public static let accessLabel = "appshell.access"
    /// The label of the server's lifecycle events: `listening`, `stopping`, `stopped`, `certificate`.
    public static let eventLabel = "appshell.events"

    private let output: Int32
    private let errors: Int32

    /// A handler writing to standard output (1) and standard error (2).
    public init() { self.init(output: 1, errors: 2) }

    /// A handler writing its JSON lines to `output` and its text lines to `errors` (tests give pipes).
    package init(output: Int32, errors: Int32) {
        self.output = output
        self.errors = errors
    }

    /// Writes `entry` as its label says (see the type).
    public func log(_ entry: LogEntry) {
        switch entry.label {
        case Self.accessLabel: write(Self.requestLine(entry), to: output)
        case Self.eventLabel: write(Self.eventLine(entry), to: output)
        default: write(Self.textLine(entry), to: errors)
        }
    }

    /// `{"time":"…"` and the metadata in order, `}` and a newline.
    static func requestLine(_ entry: LogEntry) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(192)
        line.append(contentsOf: "{\"time\":\"".utf8)
        appendTimestamp(to: &line)
        line.append(UInt8(ascii: "\""))
        for (key, value) in entry.metadata {
            line.append(UInt8(ascii: ","))
            JSON.writeString(key, into: &line)
            line.append(UInt8(ascii: ":"))
            value.write(into: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    /// The metadata with `time` and `event` as one JSON object, keys sorted, and a newline.
    static func eventLine(_ entry: LogEntry) -> [UInt8] {
        var object: [String: JSON] = [:]
        for (key, value) in entry.metadata { object[key] = value }
        var time: [UInt8] = []
        appendTimestamp(to: &time)
        object["time"] = .string(String(decoding: time, as: UTF8.self))
        object["event"] = .string(entry.message)
        var line = JSON.object(object).serialized
        line.append(0x0A)
        return line
    }

    /// `appshell: [request <id>] <label>: warning: <message> name="value"…` and a newline.
    static func textLine(_ entry: LogEntry) -> [UInt8] {
        var line = Array("appshell: ".utf8)
        let requestID = entry.metadata["requestID"]
        if case .string(let id)? = requestID { line.append(contentsOf: "[request \(id)] ".utf8) }
        if entry.label != "appshell" {
            let name =
                entry.label.hasPrefix("appshell.") ? entry.label.dropFirst("appshell.".count) : Substring(entry.label)
            line.append(contentsOf: name.utf8)
            line.append(contentsOf: ": ".utf8)
        }
        if entry.level == .warning { line.append(contentsOf: "warning: ".utf8) }
        line.append(contentsOf: entry.message.utf8)
        for (key, value) in entry.metadata where !(key == "requestID" && requestID?.stringValue != nil) {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            value.write(into: &line)
        }
        line.append(0x0A)
        return line
    }

    /// The current UTC time as RFC 3339 with microseconds: `2026-12-06T08:00:35.123456Z`.
    static func appendTimestamp(to line: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var clock = time_t(now.tv_sec)
        var time = tm()
        gmtime_r(&clock, &time)
        appendDigits(Int(time.tm_year) + 1900, count: 4, to: &line)
        line.append(UInt8(ascii: "-"))
        appendDigits(Int(time.tm_mon) + 1, count: 2, to: &line)
        line.append(UInt8(ascii: "-"))
        appendDigits(Int(time.tm_mday), count: 2, to: &line)
        line.append(UInt8(ascii: "T"))
        appendDigits(Int(time.tm_hour), count: 2, to: &line)
        line.append(UInt8(ascii: ":"))
        appendDigits(Int(time.tm_min), count: 2, to: &line)
        line.append(UInt8(ascii: ":"))
        appendDigits(Int(time.tm_sec), count: 2, to: &line)
        line.append(UInt8(ascii: "."))
        appendDigits(now.tv_nsec / 1000, count: 6, to: &line)
        line.append(UInt8(ascii: "Z"))
    }

    /// `value` in decimal with leading zeros to `count` digits (more when it needs more).
    private static func appendDigits(_ value: Int, count: Int, to line: inout [UInt8]) {
        var digits = count
        var divisor = 1
        while digits > 1 || value / divisor >= 10 {
            divisor *= 10
            digits -= 1
        }
        var rest = value
        while divisor > 0 {
            line.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private func write(_ line: [UInt8], to descriptor: Int32) {
        line.withUnsafeBytes { StandardError.writeAll($0, to: descriptor) }
    }
}
