import AppShellHTTP

/// How client bytes become actions: `POST /api/actions` JSON bodies and `POST /actions` forms,
/// through the demo's whole responder (session, Origin check, body decoding, the action's
/// parameters read by its screen). An input beginning with `F` is a form body, sent after the
/// session's valid `csrf` field (and a `csrf` of its own, if it has one, comes later and loses);
/// any other input is a JSON body.
public enum ActionsFuzz {
    /// Every answer is a documented status (2xx, 303, 4xx or 503), never a crash or another 5xx.
    public static func run(_ data: [UInt8]) {
        let harness = ShellHarness.shared
        if data.first == UInt8(ascii: "F") {
            let body = Array("csrf=\(harness.csrfToken)&".utf8) + data.dropFirst()
            _ = harness.respond(
                method: .post, target: "/actions", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: body)
        } else {
            _ = harness.respond(
                method: .post, target: "/api/actions", headers: ["Content-Type": "application/json"], body: data)
        }
    }
}
