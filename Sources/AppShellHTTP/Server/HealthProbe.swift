/// `GET /healthz` sent to a server of this machine, over TLS when it speaks HTTPS: what a
/// container's health check runs (`appshell health`), with no `curl` in the image and whatever the
/// server's allowed hosts (the request names none).
///
/// Over TLS the server's certificate is not checked: the probe asks whether the process on this
/// port answers, and a certificate for the site's name does not name 127.0.0.1.
package enum HealthProbe {
    /// Whether the server on `port` of the loopback interface answers `GET /healthz` with
    /// `{"status":"ok"}` within `timeoutSeconds`; the reason when not.
    package static func check(port: Int, tls: Bool, timeoutSeconds: Int = 3) -> (healthy: Bool, reason: String) {
        let answer: [UInt8]
        do {
            let connection = try ClientConnection(
                port: port, timeoutSeconds: timeoutSeconds,
                tls: tls ? (trustFile: nil, serverName: "127.0.0.1", priorities: nil) : nil)
            try connection.send(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
            answer = try connection.receiveToEnd(limit: 65_536)
        } catch {
            return (false, error.description)
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200"), text.contains(#""status":"ok""#) else {
            return (false, "127.0.0.1:\(port) answered: \(text.prefix(80).split(separator: "\r\n").first ?? "nothing")")
        }
        return (true, "ok")
    }
}
