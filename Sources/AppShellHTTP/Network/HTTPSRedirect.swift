/// What a plain-HTTP port beside an HTTPS server answers (`httpRedirectPort`, the usual 80 → 443):
/// `301 Moved Permanently` to the same host and target over `https://` on `httpsPort`, for every
/// method and path but `/healthz`, answered `200` (a load balancer's check on the plain port).
/// The host is the request's own, which the server checked against its allowed hosts first (421
/// otherwise): a redirect never points anywhere the site does not serve.
package struct HTTPSRedirect: HTTPResponder {
    /// The port the HTTPS server listens on (left out of the URL when it is 443).
    package let httpsPort: Int

    /// A redirect to `https://<host>[:httpsPort]`.
    package init(httpsPort: Int) { self.httpsPort = httpsPort }

    private static let healthy = Array(#"{"status":"ok"}"#.utf8)

    /// `301` to the request's URL over HTTPS, or `200` for `GET /healthz`.
    package func respond(to request: Request) throws -> Response {
        if request.path == "/healthz" { return .json(bytes: Self.healthy) }
        guard let location = location(for: request) else {
            throw HTTPError.badRequest("the request names no host: ask for https:// on port \(httpsPort)")
        }
        var response = Response.redirect(to: location, status: .movedPermanently)
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }

    /// Bodies are never read: the answer is the same whatever was sent.
    package func acceptsBody(_ request: Request) -> Bool { false }

    /// `https://` + the request's host without its port + `:httpsPort` unless 443 + its target;
    /// `nil` without a `Host`.
    func location(for request: Request) -> String? {
        guard let host = request.host, !host.isEmpty else { return nil }
        // A port follows the last colon, unless it closes an IPv6 literal (`[::1]:8080`, `[::1]`).
        var name = Substring(host)
        if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") { name = host[..<colon] }
        let port = httpsPort == 443 ? "" : ":\(httpsPort)"
        let target = request.target.hasPrefix("/") ? request.target : "/"
        return "https://\(name)\(port)\(target)"
    }
}
