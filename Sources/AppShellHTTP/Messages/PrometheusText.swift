/// Prometheus text exposition (format 0.0.4), written family by family: what `/metrics` answers.
///
/// ```swift
/// var text = PrometheusText()
/// text.family("app_jobs_total", .counter, "Jobs run since start.")
/// text.sample("app_jobs_total", ["kind": "mail"], 12)
/// let response = text.response()
/// ```
public struct PrometheusText: Sendable {
    /// A metric family's type.
    public enum Kind: String, Sendable {
        /// Only goes up (reset at restart).
        case counter
        /// Goes up and down.
        case gauge
        /// Cumulative buckets, a sum and a count.
        case histogram
    }

    /// The text written so far.
    public private(set) var text = ""

    /// An empty exposition.
    public init() { text.reserveCapacity(4096) }

    /// Starts the family `name`: its `# HELP` and `# TYPE` lines.
    public mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(PrometheusText.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample line with an integer value; `labels` in the order given.
    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: Int) {
        line(name, labels, String(value))
    }

    /// One sample line with a floating-point value; `labels` in the order given.
    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: Double) {
        line(name, labels, PrometheusText.format(value))
    }

    /// One sample line without labels.
    public mutating func sample(_ name: String, _ value: Int) { line(name, [:], String(value)) }

    /// A family with one unlabelled sample: the common case of a counter or a gauge.
    public mutating func single(_ name: String, _ kind: Kind, _ help: String, _ value: Int) {
        family(name, kind, help)
        sample(name, value)
    }

    /// Appends families already written in the exposition format (by a module that does not
    /// import this one), each line ending with a newline.
    public mutating func append(_ families: String) { text += families }

    /// The exposition as a `/metrics` answer (`text/plain; version=0.0.4`, never cached).
    public func response() -> Response {
        var response = Response.text(text)
        response.headers.replaceOrAdd(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }

    private mutating func line(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, label) in labels.enumerated() {
                if index > 0 { text += "," }
                text += "\(label.key)=\"\(PrometheusText.escapeLabel(label.value))\""
            }
            text += "}"
        }
        text += " \(value)\n"
    }

    /// A label value with `\`, `"` and line feeds escaped.
    static func escapeLabel(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A })
        else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Help text with `\` and line feeds escaped.
    static func escapeHelp(_ help: String) -> String {
        help.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }

    /// A value as Prometheus reads it (`+Inf` for infinity).
    static func format(_ value: Double) -> String {
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value.isNaN { return "NaN" }
        return value.description
    }
}

/// Anything that writes metric families into a `/metrics` answer.
public protocol MetricsSource: Sendable {
    /// Writes this source's families into `text`.
    func writeMetrics(into text: inout PrometheusText)
}
