@testable import AppShellHTTP

/// `GET /api/events` resumed with a `Last-Event-ID` field (the first input line) and a
/// `lastEventId` query value (the rest, percent-encoded as a browser would), through the demo's
/// whole responder.
public enum LastEventIDFuzz {
    /// The stream opens (200) or the request is refused with a 4xx; never a crash or a 5xx.
    public static func run(_ data: [UInt8]) {
        let harness = ShellHarness.shared
        let lines = FuzzCheck.lines(data)
        var headers = HTTPHeaders()
        if let first = lines.first {
            Array(first).withUnsafeBufferPointer { value in
                Array("Last-Event-ID".utf8).withUnsafeBufferPointer { name in headers.receive(name: name, value: value)
                }
            }
        }
        var target = "/api/events"
        if lines.count > 1 {
            let rest = String(decoding: Array(lines.dropFirst().joined(separator: [UInt8(ascii: "\n")])), as: UTF8.self)
            target += "?lastEventId=" + PercentEncoding.encode(rest)
        }
        let status = harness.respond(method: .get, target: target, headers: headers)
        FuzzCheck.require(status == 200 || (400..<500).contains(status), "status \(status) for an event stream")
    }
}
